"""Group threads (docs/PROTOCOL.md "Group membership and post"): envelopes with a group_id,
either a membership (body kind surety.group.members/1) or a post. Thread holds what a node
has accepted for its groups and checks a new envelope as the node does; refusals are
VerifyError with the node's problem slugs (group-invalid, group-unbound, group-not-creator,
group-not-member, group-too-large, group-duplicate, group-members-stale, group-reserved,
unknown-group, and envelope-* from the envelope itself)."""

import re

from .errors import DIDError, VerifyError
from .jws import Verifier, sign_envelope
from .keys import parse_did

MEMBERS_KIND = "surety.group.members/1"
MAX_MEMBERS = 256
MAX_MEMBERSHIP_SIZE = 32 << 10
MAX_POST_SIZE = 8 << 10
STATES = ("discussion", "task_assignment", "execution", "conclusion")
_GROUP_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_RESERVED = re.compile(r"bounty-[0-9]+")


def sign_membership(key, group_id: str, members, **kw) -> str:
    """A membership envelope: key's DID creates group_id (or, as its creator, sets its
    members)."""
    return sign_envelope(key, {"kind": MEMBERS_KIND, "members": list(members)}, fields={"group_id": group_id}, **kw)


def sign_post(key, group_id: str, body, state="discussion", **kw) -> str:
    """A post to group_id."""
    fields = {"group_id": group_id}
    if state:
        fields["state"] = state
    return sign_envelope(key, body, fields=fields, **kw)


class Thread:
    """Groups as one node holds them. bound: DIDs a wallet binds on chain (who may create
    groups and set members)."""

    def __init__(self, verifier: Verifier = None, bound=()):
        self.verifier = verifier or Verifier()
        self.bound = set(bound)
        self.groups = {}  # id -> {"creator", "members" (set), "iat", "id", "posts": [(sender, id)]}

    def accept(self, raw: str) -> dict:
        """Checks raw and takes it: membership facts {group, creator, members (sorted)} or
        post facts {group, sender, seq}."""
        got = self.verifier.verify(raw)
        e, size = got.envelope, len(raw.strip().encode())
        gid = e.get("group_id") or ""
        if not _GROUP_ID.fullmatch(gid):
            raise VerifyError("group-invalid", "group_id %r: 1 to 64 of A-Z a-z 0-9 - _" % gid[:70])
        body = e.get("body")
        if isinstance(body, dict) and body.get("kind") == MEMBERS_KIND:
            return self._membership(e, gid, body, size)
        return self._post(e, gid, size)

    def _membership(self, e, gid, body, size):
        sender = e["sender"]
        if size > MAX_MEMBERSHIP_SIZE:
            raise VerifyError("group-too-large", "a membership is at most %d bytes" % MAX_MEMBERSHIP_SIZE)
        members = body.get("members")
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise VerifyError("group-invalid", "members must be a list of DIDs")
        for m in members:
            try:
                parse_did(m)
            except DIDError as err:
                raise VerifyError("group-invalid", "member %r: %s" % (m[:80], err.reason)) from None
        ms = set(members) | {sender}
        if len(ms) > MAX_MEMBERS:
            raise VerifyError("group-invalid", "%d members, at most %d" % (len(ms), MAX_MEMBERS))
        if _RESERVED.fullmatch(gid):
            raise VerifyError("group-reserved", "bounty-N is for bounty N's poster and worker")
        if sender not in self.bound:
            raise VerifyError("group-unbound", "%s is bound to no wallet on chain" % sender)
        g = self.groups.get(gid)
        if g is not None:
            if sender != g["creator"]:
                raise VerifyError("group-not-creator", "%s created %s" % (g["creator"], gid))
            if (e["iat"], e["id"]) <= (g["iat"], g["id"]):
                raise VerifyError("group-members-stale", "a newer membership is in force")
            g.update(members=ms, iat=e["iat"], id=e["id"])
        else:
            g = self.groups[gid] = {"creator": sender, "members": ms, "iat": e["iat"], "id": e["id"], "posts": []}
        return {"group": gid, "creator": g["creator"], "members": sorted(ms)}

    def _post(self, e, gid, size):
        sender = e["sender"]
        if size > MAX_POST_SIZE:
            raise VerifyError("group-too-large", "a post is at most %d bytes" % MAX_POST_SIZE)
        g = self.groups.get(gid)
        if g is None:
            raise VerifyError("unknown-group", "no group %s here" % gid)
        if e.get("state") and e["state"] not in STATES:
            raise VerifyError("group-invalid", "state %r is not one of %s" % (e["state"][:40], ", ".join(STATES)))
        if sender not in g["members"]:
            raise VerifyError("group-not-member", "%s is not a member of %s" % (sender, gid))
        if sender not in self.bound and g["creator"] not in self.bound:
            raise VerifyError("group-unbound", "an unbound sender posts only where a bound creator named it")
        if (sender, e["id"]) in g["posts"]:
            raise VerifyError("group-duplicate", "the envelope is already in the thread")
        g["posts"].append((sender, e["id"]))
        return {"group": gid, "sender": sender, "seq": len(g["posts"])}
