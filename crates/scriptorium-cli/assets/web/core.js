// `core.md` with its render report: a bar of the tokens used of the budget, the blocks
// the render left out and why, and the text that is injected.

import {getJson} from './api.js';
import {el, errorLine, show, svg} from './dom.js';

const WIDTH = 600;
const HEIGHT = 28;

// The token-budget bar: the used part, coloured, over the whole budget.
function budgetBar(used, budget) {
  const share = budget > 0 ? Math.min(used / budget, 1) : 0;
  const over = budget > 0 && used > budget;
  return svg('svg', {id: 'budget-bar', class: 'chart', viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: '100%', role: 'img',
    'aria-label': `${used} of ${budget} tokens`},
    svg('title', {}, `${used} of ${budget} tokens`),
    svg('rect', {x: 0, y: 0, width: WIDTH, height: HEIGHT, rx: 4, class: 'bar-budget'}),
    svg('rect', {x: 0, y: 0, width: Math.round(share * WIDTH), height: HEIGHT, rx: 4, class: over ? 'bar-over' : 'bar-used', id: 'budget-used'}));
}

// The view `#/core`.
export async function coreView(view) {
  show(view, el('p', {class: 'muted'}, 'loading…'));
  try {
    const core = await getJson('/api/memory/core');
    const report = core.report;
    const budget = report ? report.budget : core.budget_tokens;
    const used = report ? report.tokens_used : core.rendered_tokens;
    const leftOut = report ? report.left_out : [];
    show(view,
      el('h2', {}, 'Core'),
      el('p', {id: 'budget-text'}, `${used} of ${budget} tokens used`,
        core.injection_enabled ? ` · ${core.injected_tokens} tokens injected into each conversation` : ' · injection is off'),
      budgetBar(used, budget),
      report ? '' : el('p', {class: 'muted'}, 'No render report yet: core.md has not been rendered by a write.'),
      el('h3', {}, 'Left out'),
      leftOut.length
        ? el('ul', {id: 'left-out'}, leftOut.map((left) => el('li', {}, el('code', {}, '^' + left.block_id), ': ', left.reason)))
        : el('p', {class: 'muted', id: 'left-out'}, 'Nothing was left out.'),
      el('h3', {}, 'Injected text'),
      el('pre', {class: 'text'}, core.injected_content || '(nothing)'),
      el('h3', {}, 'topics/core.md'),
      el('pre', {class: 'text'}, core.content || '(empty)'));
  } catch (error) {
    show(view, errorLine(error));
  }
}
