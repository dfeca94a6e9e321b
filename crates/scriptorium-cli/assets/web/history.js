// History of one topic file: its revisions newest first, the diff each one made, and
// restoring the file to a revision (one validated transaction, itself a new revision).

import {getJson, postJson, query} from './api.js';
import {el, errorLine, show} from './dom.js';

function diffView(text) {
  return el('pre', {class: 'diff'}, text.split('\n').map((line) => {
    const kind = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : 'same';
    return el('span', {class: 'diff-' + kind}, line + '\n');
  }));
}

// The view `#/history/<path>` (path relative to topics/).
export async function historyView(view, path) {
  const file = 'topics/' + path;
  show(view, el('p', {class: 'muted'}, 'loading…'));
  try {
    const revisions = await getJson('/api/memory/history?' + query({path: file}));
    const outcome = el('div', {id: 'restore-outcome', role: 'status'});
    const rows = revisions.map((revision, index) => {
      const detail = el('div', {class: 'revision-detail'});
      const showDiff = async () => {
        try {
          const diff = await getJson('/api/memory/diff?' + query({path: file, commit: revision.commit}));
          show(detail, diffView(diff.diff));
        } catch (error) {
          show(detail, errorLine(error));
        }
      };
      const restore = async () => {
        show(outcome, el('p', {class: 'muted'}, 'restoring…'));
        try {
          const answer = await postJson('/api/memory/restore', {path: file, commit: revision.commit});
          show(outcome, el('p', {class: 'ok'}, answer.restored ? `Restored ${file} to ${revision.commit.slice(0, 10)}.` : answer.message));
          if (answer.restored) historyView(view, path).then(() => {
            const again = document.getElementById('restore-outcome');
            if (again) show(again, el('p', {class: 'ok'}, `Restored ${file} to ${revision.commit.slice(0, 10)}.`));
          });
        } catch (error) {
          show(outcome, errorLine(error));
        }
      };
      return el('li', {class: 'revision', 'data-commit': revision.commit},
        el('p', {}, el('code', {}, revision.commit.slice(0, 10)), ` · ${revision.iso_time} · `, revision.message),
        el('button', {type: 'button', class: 'show-diff', onclick: showDiff}, 'Diff'),
        index === 0 ? el('span', {class: 'muted'}, ' (current)') : el('button', {type: 'button', class: 'restore', onclick: restore}, 'Restore this revision'),
        detail);
    });
    show(view,
      el('h2', {}, 'History of ', el('code', {}, file)),
      el('p', {}, el('a', {href: '#/topic/' + path}, 'back to the topic')),
      outcome,
      revisions.length ? el('ol', {class: 'revisions'}, rows) : el('p', {class: 'muted'}, 'No revisions yet.'));
  } catch (error) {
    show(view, errorLine(error));
  }
}
