// Group threads (groups/groups.go): a bound DID creates a group with a membership envelope
// (body {"kind": "surety.group.members/1", "members": [DIDs]}), later memberships by its
// creator replace the members, and members post envelopes in arrival order. GroupLedger holds
// a thread the way a node applies it: a client replays what it fetched from a node (GET
// /v1/groups/{id}/envelopes) and gets the node's verdicts and sequence numbers, or checks a
// membership or post before sending it. It does not hold the node's quotas (groups per
// creator, posts per sender), which depend on everything a node holds.

import { createHash } from "node:crypto";
import { parseDID } from "./did.js";
import { type Envelope, type VerifyContext, verifyEnvelope } from "./envelope.js";

/** MEMBERS_KIND is the body kind of a membership envelope. */
export const MEMBERS_KIND = "surety.group.members/1";
/** Bounds (groups/limits.go). */
export const MAX_MEMBERS = 256;
export const MAX_POST_SIZE = 8 << 10;
export const MAX_MEMBERS_SIZE = 32 << 10;
/** The states a post may name. */
export const STATES = ["discussion", "task_assignment", "execution", "conclusion"];

const GROUP_ID = /^[A-Za-z0-9_-]{1,64}$/;

type Slug = "group-invalid" | "group-unbound" | "group-not-creator" | "group-not-member" | "group-too-large" | "group-duplicate" | "group-members-stale" | "unknown-group";

/** GroupError refuses a group envelope, with the node's problem type. */
export class GroupError extends Error {
  readonly problem: string;
  constructor(
    readonly slug: Slug,
    detail: string,
  ) {
    super(`${slug}: ${detail}`);
    this.name = "GroupError";
    this.problem = "https://surety.dev/problems/" + slug;
  }
}

/** A group as the ledger holds it. */
export interface Group {
  id: string;
  creator: string;
  /** Sorted, the creator included. */
  members: string[];
}

/** A post in a thread. */
export interface Post {
  group: string;
  seq: number;
  id: string;
  sender: string;
  state?: string;
}

interface Held extends Group {
  inForceIat: number;
  inForceId: string;
  claimIat: number;
  claimHash: string;
  posts: Post[];
}

const utf8len = (s: string) => Buffer.byteLength(s);
const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const earlier = (iat: number, h: string, iat0: number, h0: string) => iat < iat0 || (iat === iat0 && h < h0);

/** isMembership says whether an envelope's body is a membership. */
export function isMembership(e: Envelope): boolean {
  const b = e.body as { kind?: unknown } | undefined;
  return typeof b === "object" && b !== null && !Array.isArray(b) && b.kind === MEMBERS_KIND;
}

/** GroupLedger applies group envelopes as a node does. */
export class GroupLedger {
  private readonly groups = new Map<string, Held>();
  private readonly seen = new Set<string>();

  /**
   * @param bound says whether a wallet binds a DID on chain (only a bound DID creates a group;
   * an unbound member posts while its group's creator is bound).
   */
  constructor(private readonly bound: (did: string) => boolean) {}

  /** group is the group id's state, or undefined. */
  group(id: string): Group | undefined {
    const g = this.groups.get(id);
    return g && { id: g.id, creator: g.creator, members: [...g.members] };
  }

  /** posts are the group's thread in order. */
  posts(id: string): Post[] {
    return [...(this.groups.get(id)?.posts ?? [])];
  }

  /**
   * apply verifies an envelope (its nonce spent, as a node spends it) and applies it as a
   * membership or a post. It throws VerifyError or GroupError.
   */
  apply(raw: string, ctx: VerifyContext = {}): Group | Post {
    const v = verifyEnvelope(raw, { ...ctx, seen: [...(ctx.seen ?? []), ...this.seen] });
    this.seen.add(v.envelope.nonce);
    const e = v.envelope;
    return isMembership(e) ? this.setMembers(e.group_id ?? "", e, raw.trim()) : this.post(e.group_id ?? "", e, raw.trim());
  }

  private checkGroupId(id: string, e: Envelope): void {
    if (!GROUP_ID.test(id)) throw new GroupError("group-invalid", `group id ${JSON.stringify(id.slice(0, 80))} must be 1-64 letters, digits, '-' or '_'`);
    if (e.group_id !== id) throw new GroupError("group-invalid", `the envelope's group_id is ${JSON.stringify(String(e.group_id ?? ""))}, not ${JSON.stringify(id)}`);
  }

  /** setMembers applies a verified membership envelope for group id. */
  setMembers(id: string, e: Envelope, raw: string): Group {
    if (utf8len(raw) > MAX_MEMBERS_SIZE) throw new GroupError("group-too-large", `a membership envelope of ${utf8len(raw)} bytes; at most ${MAX_MEMBERS_SIZE}`);
    this.checkGroupId(id, e);
    const body = e.body as { kind?: unknown; members?: unknown };
    if (!isMembership(e) || (body.members !== undefined && body.members !== null && !Array.isArray(body.members))) {
      throw new GroupError("group-invalid", `the body must be {"kind": "${MEMBERS_KIND}", "members": [DIDs]}`);
    }
    const list = [e.sender];
    for (const [i, m] of ((body.members as unknown[]) ?? []).entries()) {
      try {
        if (typeof m !== "string") throw new Error("not a string");
        parseDID(m);
      } catch (err) {
        throw new GroupError("group-invalid", `member ${i}: ${(err as Error).message}`);
      }
      list.push(m as string);
    }
    const members = [...new Set(list)].sort();
    if (members.length > MAX_MEMBERS) throw new GroupError("group-invalid", `${members.length} members; at most ${MAX_MEMBERS}`);
    const hash = sha(raw);
    const g = this.groups.get(id);
    let takeOver = false;
    let ownEarlier = false;
    if (g && e.sender !== g.creator) {
      if (!earlier(e.iat, hash, g.claimIat, g.claimHash)) throw new GroupError("group-not-creator", `group ${id} was created by ${g.creator}`);
      takeOver = true; // an earlier claim than the creator's: it created the group
    } else if (g) {
      ownEarlier = earlier(e.iat, hash, g.claimIat, g.claimHash);
    }
    if (!this.bound(e.sender)) throw new GroupError("group-unbound", `${e.sender} is bound to no wallet on chain; only a bound DID creates a group or sets its members`);
    if (!g || takeOver) {
      const posts = g ? g.posts.filter((p) => members.includes(p.sender)) : [];
      this.groups.set(id, { id, creator: e.sender, members, inForceIat: e.iat, inForceId: e.id, claimIat: e.iat, claimHash: hash, posts });
      return this.group(id)!;
    }
    if (ownEarlier) {
      g.claimIat = e.iat;
      g.claimHash = hash;
    }
    if (e.iat === g.inForceIat && e.id === g.inForceId) throw new GroupError("group-duplicate", `membership envelope ${e.id.slice(0, 80)} is the one in force`);
    if (e.iat < g.inForceIat) throw new GroupError("group-members-stale", `the membership in force was issued at ${g.inForceIat}, after this one (${e.iat})`);
    if (e.iat === g.inForceIat && e.id < g.inForceId) throw new GroupError("group-members-stale", "another membership was issued in the same second and wins");
    g.members = members;
    g.inForceIat = e.iat;
    g.inForceId = e.id;
    return this.group(id)!;
  }

  /** post applies a verified thread envelope to group id and returns its place. */
  post(id: string, e: Envelope, raw: string): Post {
    if (utf8len(raw) > MAX_POST_SIZE) throw new GroupError("group-too-large", `a thread envelope of ${utf8len(raw)} bytes; at most ${MAX_POST_SIZE}`);
    this.checkGroupId(id, e);
    if (isMembership(e)) throw new GroupError("group-invalid", "a membership envelope sets members, it is no post");
    if (e.state && !STATES.includes(e.state)) throw new GroupError("group-invalid", `state ${JSON.stringify(e.state.slice(0, 40))} is not one of ${STATES.join(", ")}`);
    const g = this.groups.get(id);
    if (!g) throw new GroupError("unknown-group", `no group ${id} here`);
    if (!g.members.includes(e.sender)) throw new GroupError("group-not-member", `${e.sender} is not a member of group ${id}`);
    if (!this.bound(g.creator) && !this.bound(e.sender)) {
      throw new GroupError("group-unbound", `group ${id}'s creator is no longer bound on chain, so only bound members post; ${e.sender} is bound to no wallet`);
    }
    if (g.posts.some((p) => p.sender === e.sender && p.id === e.id)) throw new GroupError("group-duplicate", `envelope ${e.id.slice(0, 80)} from ${e.sender}`);
    const p: Post = { group: id, seq: (g.posts.at(-1)?.seq ?? 0) + 1, id: e.id, sender: e.sender, ...(e.state ? { state: e.state } : {}) };
    g.posts.push(p);
    return p;
  }
}
