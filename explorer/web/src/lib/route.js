// parseRoute splits a location hash ("#/agent/did:key:z…?x=1") into the route's name and its
// params: the query's members, and the path part after the name under the route's parameter
// name (routes maps each name to that parameter's name, or null when it takes none). An
// unknown name is null.
export function parseRoute(hash, routes) {
  const raw = String(hash || '').replace(/^#\/?/, '');
  const qi = raw.indexOf('?');
  const path = qi < 0 ? raw : raw.slice(0, qi);
  const params = Object.fromEntries(new URLSearchParams(qi < 0 ? '' : raw.slice(qi + 1)));
  const slash = path.indexOf('/');
  const name = slash < 0 ? path : path.slice(0, slash);
  if (!Object.hasOwn(routes, name)) return { name: null, params };
  const param = routes[name];
  if (param) {
    const rest = slash < 0 ? '' : path.slice(slash + 1);
    let v = rest;
    try { v = decodeURIComponent(rest); } catch { /* keep it as typed */ }
    params[param] = v;
  }
  return { name, params };
}
