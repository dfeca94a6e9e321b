// The source frame panel: what a citation points at, verbatim, with who said it, when,
// and whether that speaker is trusted.

import {getJson, query} from './api.js';
import {el, errorLine, show} from './dom.js';

const panel = () => document.getElementById('frame');

function row(name, value) {
  return [el('dt', {}, name), el('dd', {}, value === null || value === undefined || value === '' ? '—' : String(value))];
}

// Open the frame `handle` (`…/sources/…/_v2/<thread>.md#source-<hex>`, or a legacy
// archive's record) in the panel.
export async function openFrame(handle) {
  const node = panel();
  node.hidden = false;
  show(node, el('p', {class: 'muted'}, 'loading the source…'));
  try {
    const frame = await getJson('/api/memory/source?' + query({handle}));
    const trust = frame.trust_state || 'unknown';
    const speaker = frame.speaker_display || frame.speaker_label || frame.speaker_id;
    show(
      node,
      el('div', {class: 'frame-head'},
        el('h2', {}, 'Source frame'),
        el('button', {type: 'button', class: 'close', onclick: () => { node.hidden = true; }}, 'Close')),
      el('dl', {class: 'frame-facts'},
        row('Speaker', speaker),
        row('Time', frame.time),
        el('dt', {}, 'Trust'),
        el('dd', {}, el('span', {class: `trust trust-${trust === 'trusted' ? 'trusted' : 'other'}`}, trust),
          frame.authority_tier ? ` ${frame.authority_tier}` : '',
          frame.legacy ? ' legacy record: its speaker is not verified' : ''),
        row('Where', `${frame.path}:${frame.line}`)),
      el('pre', {class: 'frame-text', id: 'frame-text'}, frame.text),
    );
  } catch (error) {
    show(node, el('h2', {}, 'Source frame'), errorLine(error), el('p', {class: 'muted'}, handle));
  }
}
