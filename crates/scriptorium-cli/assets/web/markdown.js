// Reads a topic file into blocks for display: headings, paragraphs with their citations,
// and the footnote definitions those citations point at. It only splits text; the page
// shows every piece with text nodes, so markup in memory is shown, never run.

const FOOTNOTE_DEF = /^\[\^([^\]\s]+)\]:\s*(.*)$/;
const FOOTNOTE_REF = /\[\^([^\]\s]+)\]/g;
const BLOCK_ID = /\s\^[0-9a-z][0-9a-z-]*\s*$/;
const SOURCE_LINK = /\[([^\]]*)\]\(([^)\s]+)\)/g;
const TIME = /Time:\s*`([^`]*)`/;

// `{time, sources:[{label, handle}]}` from the text after `[^id]:`.
export function parseDefinition(text) {
  const time = TIME.exec(text);
  const sources = [...text.matchAll(SOURCE_LINK)].map((m) => ({label: m[1], handle: m[2]}));
  return {time: time ? time[1] : '', sources};
}

// `{blocks:[{kind:'heading', level, text} | {kind:'paragraph', text, refs, line}], notes: Map}`.
export function parseTopic(content) {
  const notes = new Map();
  const blocks = [];
  let pending = [];
  let start = 0;
  const flush = () => {
    if (pending.length === 0) return;
    const joined = pending.join('\n');
    const refs = [...new Set([...joined.matchAll(FOOTNOTE_REF)].map((m) => m[1]))];
    const text = joined.replace(FOOTNOTE_REF, '').replace(BLOCK_ID, '').trim();
    blocks.push({kind: 'paragraph', text, refs, line: start});
    pending = [];
  };
  content.split('\n').forEach((line, index) => {
    const def = FOOTNOTE_DEF.exec(line);
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (def) {
      flush();
      notes.set(def[1], parseDefinition(def[2]));
    } else if (heading) {
      flush();
      blocks.push({kind: 'heading', level: heading[1].length, text: heading[2].trim()});
    } else if (line.trim() === '') {
      flush();
    } else {
      if (pending.length === 0) start = index + 1;
      pending.push(line);
    }
  });
  flush();
  return {blocks, notes};
}
