// The page: a topic tree on the left, one view in the middle chosen by the address's
// `#/…` part, and the source frame panel on the right.

import {getJson} from './api.js';
import {coreView} from './core.js';
import {el, errorLine, show} from './dom.js';
import {editView} from './edit.js';
import {historyView} from './history.js';
import {searchView} from './search.js';
import {timelineView} from './timeline.js';
import {loadTree, topicView} from './topics.js';

async function status() {
  const node = document.getElementById('status');
  try {
    const s = await getJson('/api/memory/status');
    show(node, `${s.topic_files} topics · ${s.source_files} source files · `, el('code', {}, s.workspace_path));
  } catch (error) {
    show(node, errorLine(error));
  }
}

function home(view, topics) {
  show(view,
    el('h2', {}, 'Memory'),
    el('p', {}, 'Pick a topic on the left to read it with its evidence: each citation opens the exact source it rests on.'),
    el('ul', {}, topics.map((t) => el('li', {}, el('a', {href: '#/topic/' + t.path}, t.title || t.path), ' ', el('code', {class: 'muted'}, t.path)))));
}

let topics = [];

async function route() {
  const view = document.getElementById('view');
  const hash = decodeURIComponent(location.hash.replace(/^#\/?/, ''));
  const [name, ...rest] = hash.split('/');
  const path = rest.join('/');
  document.querySelectorAll('nav a[data-view]').forEach((a) => a.classList.toggle('current', a.dataset.view === (name || 'home')));
  view.dataset.view = name || 'home';
  switch (name) {
    case 'topic': return topicView(view, path);
    case 'edit': return editView(view, path);
    case 'history': return historyView(view, path);
    case 'search': return searchView(view);
    case 'core': return coreView(view);
    case 'timeline': return timelineView(view);
    default: return home(view, topics);
  }
}

window.addEventListener('hashchange', () => {
  route();
  // A saved edit or a restore may change the tree.
  loadTree();
});

status();
loadTree().then((list) => {
  topics = list;
  route();
});
