// The timeline: one bar per day (height by the size of that day's notes), and the
// notes of the day picked.

import {getJson} from './api.js';
import {el, errorLine, show, svg} from './dom.js';

const HEIGHT = 120;
const LABEL = 16;
const BAR = 34;
const GAP = 8;

function chart(days, pick) {
  const largest = Math.max(1, ...days.map((day) => day.size));
  const width = Math.max(days.length * (BAR + GAP) + GAP, 200);
  return svg('svg', {id: 'timeline-chart', class: 'chart', viewBox: `0 0 ${width} ${HEIGHT + LABEL}`, width: Math.min(width, 900), role: 'img',
    'aria-label': `${days.length} days`},
    days.map((day, index) => {
      const height = Math.max(2, Math.round((day.size / largest) * HEIGHT));
      const x = GAP + index * (BAR + GAP);
      return svg('g', {},
        svg('rect', {x, y: HEIGHT - height, width: BAR, height, class: 'day-bar', 'data-date': day.date, onclick: () => pick(day.date)},
          svg('title', {}, `${day.date}: ${day.size} bytes`)),
        svg('text', {x: x + BAR / 2, y: HEIGHT + LABEL - 3, class: 'day-label', 'text-anchor': 'middle'}, day.date.slice(5)));
    }));
}

// The view `#/timeline`.
export async function timelineView(view) {
  show(view, el('p', {class: 'muted'}, 'loading…'));
  try {
    const entries = await getJson('/api/memory/timeline');
    const days = entries.filter((entry) => /^\d{4}-\d{2}-\d{2}$/.test(entry.date)).reverse();
    const notes = el('div', {id: 'timeline-day'});
    const pick = async (date) => {
      show(notes, el('p', {class: 'muted'}, 'loading…'));
      try {
        const day = await getJson('/api/memory/timeline/' + encodeURIComponent(date));
        show(notes, el('h3', {}, day.date), el('pre', {class: 'text'}, day.content || '(nothing on this day)'));
      } catch (error) {
        show(notes, errorLine(error));
      }
    };
    show(view,
      el('h2', {}, 'Timeline'),
      entries.length === 0 ? el('p', {class: 'muted'}, 'No timeline yet.') : '',
      days.length ? chart(days, pick) : '',
      el('ul', {class: 'dates'}, entries.map((entry) =>
        el('li', {}, el('a', {href: '#', onclick: (e) => { e.preventDefault(); pick(entry.date); }}, entry.date), ` · ${entry.size} bytes`))),
      notes);
  } catch (error) {
    show(view, errorLine(error));
  }
}
