// Package demo plays a marketplace day on a node of its own, printing the story as it
// happens: a marketplace and five agents get DIDs and wallets, bind and stake; agents register
// cards; the marketplace finds candidates by capability and reputation and posts three
// bounties; agents talk in a group thread; one bounty is accepted, one disputed and resolved
// by the arbiter, one refunded after its deadline; audits move reputation; the auditor checks
// an inclusion proof against the root anchored on chain; wallets withdraw, and the final
// balances are read from the chain.
//
// It starts its node through package node and then acts like any other client: everything a
// user does at the node goes through the typed API client (api/client), signed by the
// parties' own keys. Only what a user does at the chain itself goes to the chain: reading
// balances, moving a dev chain's clock, and the treasury withdrawing its fees (the node has no
// route for that).
//
// `surety demo` (and `make demo`) parses its flags into a Config and calls Run.
package demo
