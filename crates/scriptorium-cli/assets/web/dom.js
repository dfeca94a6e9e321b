// Small DOM builders. Memory text is untrusted, so every piece of it enters the page as a
// text node (`append` of a string); nothing here ever parses a string as HTML.

const SVG_NS = 'http://www.w3.org/2000/svg';

function fill(node, attrs, children) {
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'class') node.setAttribute('class', value);
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null && child !== false) node.append(child);
  }
  return node;
}

// An HTML element: `el('p', {class: 'x'}, 'text', otherNode)`.
export function el(tag, attrs = {}, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

// An SVG element, for the charts.
export function svg(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

// Replace everything inside `node`.
export function show(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
  return node;
}

// A line that says something went wrong, with the server's code when there is one.
export function errorLine(error) {
  return el('p', {class: 'error', role: 'alert'}, String(error.message || error));
}
