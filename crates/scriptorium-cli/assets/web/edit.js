// Editing a topic in the page: every save is checked first by `POST /api/memory/validate`
// (the install's own checks, nothing installed), and a rejected edit shows its errors
// next to the text, line by line, while the file on disk stays as it was.

import {getJson, postJson, putJson, topicUrl} from './api.js';
import {el, errorLine, show} from './dom.js';

// Put the caret on line `line` (1-based) of the textarea.
function selectLine(area, line) {
  const lines = area.value.split('\n');
  const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0);
  area.focus();
  area.setSelectionRange(start, start + (lines[line - 1] || '').length);
}

function violationList(area, error) {
  const violations = (error.details && error.details.violations) || [];
  const items = violations.map((v) => {
    const where = v.line ? `line ${v.line}` : v.file || v.path || 'file';
    const text = v.detail || v.message || v.reason || '';
    return el('li', {class: 'violation', 'data-line': v.line || ''},
      v.line ? el('a', {href: '#', onclick: (e) => { e.preventDefault(); selectLine(area, v.line); }}, where) : where,
      ': ', v.code ? el('code', {}, v.code) : '', text ? ` ${text}` : '');
  });
  return el('div', {id: 'edit-errors', class: 'error', role: 'alert'},
    el('p', {}, `Not saved: ${error.message || 'the edit is invalid'}${error.code ? ` (${error.code})` : ''}`),
    items.length ? el('ul', {}, items) : '');
}

// The view `#/edit/<path>` (path relative to topics/).
export async function editView(view, path) {
  show(view, el('p', {class: 'muted'}, 'loading…'));
  let original;
  try {
    original = (await getJson(topicUrl(path))).content;
  } catch (error) {
    show(view, errorLine(error));
    return;
  }
  const area = el('textarea', {id: 'editor', spellcheck: 'false', rows: 24});
  area.value = original;
  const outcome = el('div', {id: 'edit-outcome'});
  const check = async () => {
    const answer = await postJson('/api/memory/validate', {path: 'topics/' + path, content: area.value});
    if (answer.valid) return true;
    area.classList.add('invalid');
    show(outcome, violationList(area, answer.error || {}));
    return false;
  };
  const run = async (save) => {
    show(outcome, el('p', {class: 'muted'}, save ? 'saving…' : 'checking…'));
    area.classList.remove('invalid');
    try {
      if (!(await check())) return;
      if (!save) {
        show(outcome, el('p', {class: 'ok'}, 'The edit is valid (not saved yet).'));
        return;
      }
      const answer = await putJson(topicUrl(path), {content: area.value});
      show(outcome, el('p', {class: 'ok', id: 'edit-saved'}, 'Saved.', answer.warning ? ` ${answer.warning}` : ''));
    } catch (error) {
      const body = error.body || {};
      show(outcome, body.details ? violationList(area, {message: body.error, code: body.code, details: body.details}) : errorLine(error));
    }
  };
  show(view,
    el('h2', {}, 'Edit ', el('code', {}, 'topics/' + path)),
    el('p', {class: 'muted'}, 'Each paragraph needs a citation; the edit is checked before anything is installed.'),
    area,
    el('div', {class: 'toolbar'},
      el('button', {type: 'button', id: 'edit-check', onclick: () => run(false)}, 'Check'),
      el('button', {type: 'button', id: 'edit-save', onclick: () => run(true)}, 'Save'),
      el('a', {href: '#/topic/' + path, class: 'button'}, 'Back to the topic')),
    outcome);
}
