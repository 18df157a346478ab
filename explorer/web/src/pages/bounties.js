// A stub of the bounties page, so that the bundle builds; web-log's page replaces it.
import { h } from '../lib/api.js';

export function render(root) {
  root.append(h('h1', null, 'Bounties'), h('p', { class: 'muted' }, 'This page is not written yet.'));
}
