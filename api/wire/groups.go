package wire

// Group is a group's membership as a node knows it (groups.Group).
type Group struct {
	ID      string   `json:"id"`
	Creator string   `json:"creator"`
	Members []string `json:"members"` // sorted
	// Updated is the iat of the membership envelope in force.
	Updated int64 `json:"updated"`
	// Envelopes is how many envelopes the thread holds here.
	Envelopes int64 `json:"envelopes"`
}

// Posted is the answer of POST /v1/groups/{id}/envelopes (groups.Posted).
type Posted struct {
	// Envelope is the stored envelope, nil when the group lives on another node.
	Envelope *GroupEnvelope `json:"envelope,omitempty"`
	// Forwarded says the envelope went to the network.
	Forwarded bool `json:"forwarded"`
}

// GroupEnvelope is one envelope of a thread (groups.Envelope), as a page and the stream
// carry it.
type GroupEnvelope struct {
	Group    string `json:"group_id"`
	Seq      int64  `json:"seq"` // arrival order on the node
	ID       string `json:"id"`
	Sender   string `json:"sender"`
	State    string `json:"state,omitempty"`
	IssuedAt int64  `json:"iat"`
	Received int64  `json:"received"` // unix seconds
	// Envelope is the envelope as signed (compact JWS, or the JSON serialization): verify
	// it yourself with any JOSE library.
	Envelope string `json:"envelope"`
}

// GroupPage is a page of a thread: the envelopes, and the seq to ask after for the next
// page (the last one's; the same as asked when the page is empty).
type GroupPage struct {
	Envelopes []*GroupEnvelope `json:"envelopes"`
	Next      int64            `json:"next"`
}
