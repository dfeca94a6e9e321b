// The topic tree (every topic file, grouped by folder) and one topic read by its
// evidence: each paragraph followed by its citations, each citation opening its frame.

import {getJson, topicUrl} from './api.js';
import {el, errorLine, show} from './dom.js';
import {openFrame} from './frame.js';
import {parseTopic} from './markdown.js';

// `#/topic/<path>` for a topic path relative to topics/.
export const topicHash = (path) => '#/topic/' + path;

function insert(tree, topic) {
  const parts = topic.path.split('/');
  let node = tree;
  for (const part of parts.slice(0, -1)) {
    if (!node.folders.has(part)) node.folders.set(part, {folders: new Map(), files: []});
    node = node.folders.get(part);
  }
  node.files.push(topic);
}

function renderFolder(node) {
  const items = [];
  for (const [name, child] of [...node.folders].sort(([a], [b]) => a.localeCompare(b))) {
    items.push(el('li', {class: 'folder'}, el('details', {open: true}, el('summary', {}, name + '/'), renderFolder(child))));
  }
  for (const topic of node.files.sort((a, b) => a.path.localeCompare(b.path))) {
    items.push(el('li', {}, el('a', {href: topicHash(topic.path), class: 'topic-link', 'data-path': topic.path, title: topic.path}, topic.title || topic.path)));
  }
  return el('ul', {}, items);
}

// Fill the sidebar with the topic tree.
export async function loadTree() {
  const node = document.getElementById('tree');
  try {
    const topics = await getJson('/api/memory/topics');
    const tree = {folders: new Map(), files: []};
    topics.forEach((topic) => insert(tree, topic));
    show(node, el('h2', {}, 'Topics'), topics.length ? renderFolder(tree) : el('p', {class: 'muted'}, 'No topics yet.'));
    return topics;
  } catch (error) {
    show(node, el('h2', {}, 'Topics'), errorLine(error));
    return [];
  }
}

function citations(refs, notes) {
  const links = [];
  for (const ref of refs) {
    const note = notes.get(ref);
    if (!note) {
      links.push(el('span', {class: 'cite-missing'}, `[^${ref}] has no definition`));
      continue;
    }
    for (const source of note.sources) {
      links.push(
        el('a', {
          href: '#',
          class: 'cite',
          'data-handle': source.handle,
          title: source.handle,
          onclick: (event) => {
            event.preventDefault();
            openFrame(source.handle);
          },
        }, source.label || 'source'),
      );
    }
    if (note.time) links.push(el('span', {class: 'cite-time'}, note.time));
  }
  return links;
}

// The view `#/topic/<path>`.
export async function topicView(view, path) {
  show(view, el('p', {class: 'muted'}, 'loading…'));
  try {
    const topic = await getJson(topicUrl(path));
    const {blocks, notes} = parseTopic(topic.content);
    const body = blocks.map((block) => {
      if (block.kind === 'heading') return el(`h${Math.min(block.level + 1, 6)}`, {}, block.text);
      const cites = citations(block.refs, notes);
      return el('div', {class: 'para' + (cites.length ? '' : ' uncited'), 'data-line': block.line},
        el('p', {}, block.text),
        el('p', {class: 'cites'}, cites.length ? ['Evidence: ', ...cites] : 'no citation'));
    });
    show(view,
      el('div', {class: 'toolbar'},
        el('code', {}, 'topics/' + topic.path),
        el('a', {href: '#/edit/' + path, class: 'button', id: 'edit-topic'}, 'Edit'),
        el('a', {href: '#/history/' + path, class: 'button', id: 'topic-history'}, 'History')),
      el('article', {class: 'topic', id: 'topic'}, body));
  } catch (error) {
    show(view, errorLine(error));
  }
}
