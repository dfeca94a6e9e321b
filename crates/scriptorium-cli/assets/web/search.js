// Search: the ranked BM25 hits with the speaker, path and date filters. A hit in a
// source archive opens its frame; a hit in a topic opens the topic.

import {getJson, query} from './api.js';
import {el, errorLine, show} from './dom.js';
import {openFrame} from './frame.js';

function field(name, label, placeholder) {
  return el('label', {}, label, el('input', {name, id: 'search-' + name.replace('_', '-'), placeholder, autocomplete: 'off'}));
}

function hitView(hit) {
  const trust = hit.trust_state || '';
  const speaker = hit.speaker_display || hit.speaker_label || hit.speaker_id;
  const where = `${hit.path}${hit.line ? ':' + hit.line : ''}`;
  const isSource = hit.path.startsWith('sources/') && hit.anchor;
  const open = isSource
    ? el('a', {href: '#', class: 'cite hit-open', onclick: (e) => { e.preventDefault(); openFrame(`${hit.path}#${String(hit.anchor).replace(/^#/, '')}`); }}, 'open the frame')
    : el('a', {href: '#/topic/' + hit.path.replace(/^topics\//, ''), class: 'hit-open'}, 'open the topic');
  return el('li', {class: 'hit'},
    el('p', {class: 'hit-meta'}, el('code', {}, where), hit.date ? ` · ${hit.date}` : '', speaker ? ` · ${speaker}` : '',
      trust ? el('span', {class: `trust trust-${trust === 'trusted' ? 'trusted' : 'other'}`}, trust) : ''),
    (hit.headings || []).length ? el('p', {class: 'muted'}, hit.headings.join(' › ')) : '',
    el('p', {class: 'hit-content'}, hit.content),
    open);
}

// The view `#/search`.
export function searchView(view) {
  const results = el('div', {id: 'search-results'});
  const form = el('form', {id: 'search-form', class: 'search'},
    field('q', 'Words', 'what to look for'),
    field('speaker', 'Speaker', 'name or id'),
    field('path_prefix', 'Path', 'e.g. topics/garden'),
    field('date_from', 'From', 'YYYY-MM-DD'),
    field('date_to', 'To', 'YYYY-MM-DD'),
    el('button', {type: 'submit', id: 'search-go'}, 'Search'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const params = Object.fromEntries(new FormData(form));
    if (!params.q || !params.q.trim()) {
      show(results, el('p', {class: 'error'}, 'Type some words to search for.'));
      return;
    }
    show(results, el('p', {class: 'muted'}, 'searching…'));
    try {
      const answer = await getJson('/api/memory/search?' + query({...params, top_k: 20}));
      show(results,
        el('p', {class: 'muted', id: 'search-count'}, `${answer.results.length} result${answer.results.length === 1 ? '' : 's'}`),
        el('ol', {class: 'hits'}, answer.results.map(hitView)));
    } catch (error) {
      show(results, errorLine(error));
    }
  });
  show(view, el('h2', {}, 'Search'), form, results);
}
