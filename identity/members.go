package identity

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/surety-ioa/surety/internal/jcs"
)

// Implementations read JSON differently: Go's encoding/json matches member names without
// regard to case and takes the last of duplicates; JavaScript's JSON.parse and Python's json
// match exact names and take the last duplicate. An envelope that two verifiers could read
// two ways (aud for one node here, for another there) is refused: its payload must be
// I-JSON (RFC 7493: no duplicate member anywhere, valid UTF-8, no lone surrogate), and a
// member whose name is a case variant of one the envelope defines (AUD beside aud, Sender) is
// malformed. Members this version does not know are kept, as before.

// exactMembers checks payload, an envelope's, as the comment above says.
func exactMembers(payload []byte) error {
	v, err := jcs.Parse(payload)
	if err != nil {
		// "member "aud" appears twice", without the canonicalizer's prefix.
		return fmt.Errorf("not I-JSON (RFC 7493): %s", strings.TrimPrefix(err.Error(), jcs.ErrInvalid.Error()+": "))
	}
	return caseExact(v, reflect.TypeFor[Envelope]())
}

// member is a struct field as JSON names it: its exact name and, for a field that is a struct
// (or a pointer to one), that struct's type.
type member struct {
	name   string
	nested reflect.Type
}

// membersOf caches the members of struct types.
var membersOf sync.Map // reflect.Type → []member

func members(t reflect.Type) []member {
	if m, ok := membersOf.Load(t); ok {
		return m.([]member)
	}
	var m []member
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var nested reflect.Type
		if ft.Kind() == reflect.Struct {
			nested = ft
		}
		m = append(m, member{name: name, nested: nested})
	}
	membersOf.Store(t, m)
	return m
}

// caseExact refuses, in v (what jcs.Parse read) decoded into struct type t, a member whose
// name matches a field of t only without regard to case; it looks into members that are
// structs (or pointers to them) too.
func caseExact(v any, t reflect.Type) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil // the decoder refuses a wrong type
	}
	known := members(t)
	for k, sub := range obj {
		for _, m := range known {
			// EqualFold folds as encoding/json's matching does (Unicode simple folding:
			// "ſender" is "sender" to it).
			if !strings.EqualFold(k, m.name) {
				continue
			}
			if k != m.name {
				return fmt.Errorf("member %q is a case variant of %q: names are exact", truncate(k, 40), m.name)
			}
			if m.nested != nil {
				if err := caseExact(sub, m.nested); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
