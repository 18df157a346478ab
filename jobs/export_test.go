package jobs

// LatestEvents exposes latestEvents to the package's tests (Get lists MaxHistory of them).
var LatestEvents = (*Indexer).latestEvents
