"""The typed answers hold to api/openapi.json: every member the document gives a response
schema is a field of the client's type of it, and every field of the type is a member the
document (or, where the document is behind the wire type, api/wire) names."""

import json
import os
import sys
import unittest
from dataclasses import fields

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from helpers import REPO  # noqa: E402
from surety import types  # noqa: E402

# The client's type of each schema.
PAIRS = {"Info": types.Info, "InfoChain": types.InfoChain, "Agent": types.Agent, "Bounty": types.Bounty, "Job": types.Job,
         "StakeRecord": types.Holding, "Reputation": types.Reputation, "StoredAudit": types.StoredAudit,
         "TreeHead": types.Head, "InclusionProof": types.InclusionProof, "BindingAnswer": types.BindingAnswer,
         "Submitted": types.Submitted, "VerifyResponse": types.VerifyResponse}
# Members api/wire has that the document does not list (yet).
NOT_IN_DOCUMENT = {}


def properties(schemas, name):
    s = schemas[name]
    props = dict(s.get("properties") or {})
    for part in s.get("allOf") or []:
        if "$ref" in part:
            props.update(properties(schemas, part["$ref"].rsplit("/", 1)[1]))
        props.update(part.get("properties") or {})
    return props


def json_names(cls):
    by_json = {}
    for f in fields(cls):
        if f.name != "raw":
            by_json[cls._json_names.get(f.name, types._camel(f.name))] = f.name
    return set(by_json)


class TestTypesHoldToOpenAPI(unittest.TestCase):
    def test_pairs(self):
        with open(os.path.join(REPO, "api", "openapi.json")) as f:
            schemas = json.load(f)["components"]["schemas"]
        for name, cls in PAIRS.items():
            with self.subTest(schema=name):
                doc = set(properties(schemas, name))
                ours = json_names(cls)
                self.assertEqual(doc - ours, set(), "members of %s the client's %s drops" % (name, cls.__name__))
                self.assertEqual(ours - doc - NOT_IN_DOCUMENT.get(name, set()), set(), "fields of %s the document does not name" % cls.__name__)


if __name__ == "__main__":
    unittest.main()
