"""The client's errors. Each refusal of a signed object names the problem type the node's
API answers for the same refusal (api/errors.go), so a caller, a test or a conformance
vector compares one string."""

PROBLEM_BASE = "https://surety.dev/problems/"


class SuretyError(Exception):
    """Base of the client's errors."""


class DIDError(SuretyError, ValueError):
    """A DID that does not parse. slug is the node's problem slug: invalid-did,
    unsupported-did-method or unsupported-key-type."""

    def __init__(self, did, reason, slug="invalid-did"):
        super().__init__("%s %r: %s" % (slug.replace("-", " "), did[:120] if isinstance(did, str) else did, reason))
        self.did, self.reason, self.slug = did, reason, slug

    @property
    def problem(self):
        return PROBLEM_BASE + self.slug


class VerifyError(SuretyError):
    """A signed object refused. slug names the node's problem type (envelope-bad-signature,
    card-forged, bad-proof, ...); reason is the envelope reason the node sends beside it
    (bad-signature, expired, ...), when there is one."""

    def __init__(self, slug, detail="", reason="", kid=""):
        msg = slug + (": " + detail if detail else "") + (" (kid %s)" % kid[:140] if kid else "")
        super().__init__(msg)
        self.slug, self.detail, self.reason, self.kid = slug, detail, reason, kid

    @property
    def problem(self):
        return PROBLEM_BASE + self.slug


class ProblemError(SuretyError):
    """An RFC 9457 problem the node answered (application/problem+json): type, title,
    status, detail, and reason for an envelope refusal."""

    def __init__(self, status, type="about:blank", title="", detail="", reason="", instance="", body=None):
        super().__init__("%d %s%s" % (status, title or type, ": " + detail if detail else ""))
        self.status, self.type, self.title, self.detail = status, type, title, detail
        self.reason, self.instance, self.body = reason, instance, body

    @property
    def slug(self):
        return self.type[len(PROBLEM_BASE):] if self.type.startswith(PROBLEM_BASE) else self.type


class RPCError(SuretyError):
    """A JSON-RPC error the chain (or the node's relay) answered; data holds revert data, and
    revert the contract's custom error it names ("NotPoster(7, 0x...)"), when it is one of
    Surety's contracts'."""

    def __init__(self, code, message, data=None, revert=None):
        super().__init__("JSON-RPC error %s: %s" % (code, message))
        self.code, self.message, self.data, self.revert = code, message, data, revert
