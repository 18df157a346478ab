// Package explorer is the node's web explorer: a small single-page front end built from
// web/ (esbuild, uPlot; pinned in web/package-lock.json) into dist/, which is committed and
// embedded in the binary. Handler serves it under /explorer/ with a Content-Security-Policy
// that allows nothing but the node's own origin: the page reads the node's API and nothing
// else, and verifies what it can in the browser. `make explorer` rebuilds dist/;
// TestBundleIsBuilt fails when it is stale.
package explorer
