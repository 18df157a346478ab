// A stub of the audit log page, so that the bundle builds; web-log's page replaces it.
import { h } from '../lib/api.js';

export function render(root) {
  root.append(h('h1', null, 'Audit log'), h('p', { class: 'muted' }, 'This page is not written yet.'));
}
