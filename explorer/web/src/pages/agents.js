import { h } from '../lib/api.js';

export function render(root) {
  root.append(h('h1', null, 'Agents'), h('p', { class: 'muted' }, 'This page is not written yet.'));
}
