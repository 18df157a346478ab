package semantic

// Sizes and weights of the model, in one place.

// Dim is the number of components of every vector.
const Dim = 128

// maxStems bounds the stems a model file may declare (the committed one has far fewer).
const maxStems = 1 << 20

// SubwordWeight is the weight of a stem's subword vector (Subword) in its trained vector, the
// WordNet part weighing 1: enough to keep a stem near its spelling variants, little enough
// that meaning decides.
const SubwordWeight = 0.25

// parallelRows is the least number of rows per part when Index.Search splits its scan over
// CPUs: below it a goroutine costs more than it saves.
const parallelRows = 16384

// scatteredRows is parallelRows for rows read scattered over the index (a prefilter's
// candidates): each costs a wait on memory rather than a few cycles, so fewer are worth a
// goroutine.
const scatteredRows = 2048

// prefilterRows is the most rows Index.Search compares a query with one by one; above, it
// compares exactly only the rows whose sign codes are nearest the query's (candidates): at
// least prefilterCandidates of them, prefilterPerHit per hit asked, and one row in
// prefilterShare (recall@200 against comparing every row: 0.98 on TestPrefilter's 40,000
// cards, see BenchmarkSemanticSearch for 100,000 and more). It was 32,768: a capability's
// cards among 100,000 (about 19,000, SearchAmong) compared one by one cost a hybrid query
// about as much as its text side, the rows read scattered over the index; the prefilter
// reads a fifth of them (recall@200 0.988 on TestPrefilter's 20,000 cards). At 16,384 the unstaked cards' index under its
// default quota (10,000) is still compared one by one.
const (
	prefilterRows       = 16384
	prefilterPerHit     = 16
	prefilterShare      = 32
	prefilterCandidates = 4096
	// prefilterNear is how many times the candidates the first pass of the prefilter keeps
	// (by Hamming distance) for the second to choose from (Index.candidates).
	prefilterNear = 8
)
