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
