// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title ISuretyHook
/// @notice Types, errors and events of SuretyHook, Surety's extras for ERC-8183 jobs.
///
/// A Surety job is a standard ERC-8183 job on JobEscrow whose evaluator and hook are the
/// SuretyHook and whose provider is the hook's SuretyPool:
/// `createJob(provider=pool, evaluator=hook, expiredAt, description, hook=hook, agentId)`.
/// The client's `setBudget(jobId, token, amount, abi.encode(plan))` carries the job's Plan.
/// Workers join and submit through the hook; the client approves, picks, or rejects (a
/// dispute its arbiter resolves with a split); silence pays the workers after the review
/// window. docs/ERC8183.md walks every path.
interface ISuretyHook {
    /// @notice What the client's setBudget optParams carry, abi-encoded: the job's rules.
    struct Plan {
        address arbiter; // rules on disputes; never the client or a worker
        uint32 reviewWindow; // seconds the client has to approve, pick or reject once entries close
        uint32 arbiterTime; // seconds the arbiter has to rule on a dispute
        uint16 maxEntries; // workers that may join: 1 = a single worker; more = competing
        uint16 maxWinners; // workers a pick or ruling may pay, 1..maxEntries
        uint128 minStake; // stake a join locks in the StakeRegistry until the job settles (0: none)
        address worker; // the one worker allowed to join (maxEntries 1), or address(0): open
        uint256 prevPart; // milestones: the previous part's job id (only its worker, once paid unslashed, may join), 0: none
    }

    /// @notice Where a Surety job is in the hook's eyes (the core job has its own status).
    enum Phase {
        None, // no plan yet
        Planned, // the client's setBudget stored a plan; the job is not funded
        Open, // funded: workers join and submit
        Disputed, // the client rejected: the arbiter decides
        Settled // paid out (or refunded), every stake lock ended
    }

    /// @notice How a job settled.
    enum Outcome {
        Approved, // the client approved or picked
        Released, // the review window passed in silence: the first submitters share the budget
        Resolved, // the arbiter ruled
        ResolvedExpired, // the arbiter's time ran out: half to the client, half to the first submitters
        Cancelled, // the client took the budget back before any submission
        Expired // the core job expired (claimRefund) or was rejected while open: locks ended
    }

    /// @notice The job's state the hook keeps.
    struct Job {
        address client;
        Phase phase;
        uint40 closedAt; // when the last allowed entry was submitted (entries closed early), 0 before
        uint40 disputedAt; // when the client rejected, 0 before
        bool paid; // settled with a share to its worker(s) and no slash: a milestone's next part is theirs
        address token;
        uint64 expiredAt; // the core job's expiredAt
        uint16 joined;
        uint16 submitted;
    }

    // --- errors ---

    /// @notice Only the job escrow may call this.
    error NotCore(address caller);
    /// @notice The stake registry does not name this hook as its job locker.
    error NotJobLocker(address registry);
    /// @notice The job is not a Surety job of this hook (no plan, or not funded through it).
    error UnknownJob(uint256 jobId);
    /// @notice A job naming this hook must name the pool as provider and the hook as evaluator.
    error NotSuretyJob(uint256 jobId, address provider, address evaluator);
    /// @notice Only the job's client may do this.
    error NotClient(uint256 jobId, address caller);
    /// @notice Only the job's arbiter may do this.
    error NotArbiter(uint256 jobId, address caller);
    /// @notice The job's phase does not allow this.
    error WrongPhase(uint256 jobId, Phase phase);
    /// @notice The plan is not valid (the field's name says which rule it breaks).
    error InvalidPlan(string field);
    /// @notice The plan cannot finish before the core job expires: review, ruling and a
    /// settle window must fit between now and expiredAt (checked at fund, join and submit).
    error TooLate(uint256 jobId, uint256 finishBy, uint256 expiredAt);
    /// @notice The job takes no more entries.
    error JobFull(uint256 jobId);
    /// @notice The caller may not join this job (named worker, milestone part, client or arbiter).
    error NotAllowed(uint256 jobId, address caller);
    /// @notice The caller joined already.
    error AlreadyJoined(uint256 jobId, address worker);
    /// @notice The caller did not join, or its entry is not what the call needs.
    error NotEntrant(uint256 jobId, address worker);
    /// @notice The caller submitted already.
    error AlreadySubmitted(uint256 jobId, address worker);
    /// @notice Nothing was submitted yet.
    error NothingSubmitted(uint256 jobId);
    /// @notice The review window is still open.
    error ReviewWindowOpen(uint256 jobId, uint256 endsAt);
    /// @notice The review window has closed.
    error ReviewWindowClosed(uint256 jobId, uint256 endedAt);
    /// @notice The arbiter still has time to rule.
    error ArbiterTimeNotUp(uint256 jobId, uint256 endsAt);
    /// @notice Winners and shares: lengths differ, too many winners, a duplicate or a worker
    /// without a submission, or shares above (or for a pick, not exactly) 10,000 bps.
    error InvalidSplit(uint256 jobId);
    /// @notice A slash above the job's minStake, or on a competing job (losers lose no stake).
    error InvalidSlash(uint256 jobId, uint256 slash);
    /// @notice The job's workers have joined: the client cannot cancel before the entries close.
    error HasEntries(uint256 jobId);
    /// @notice The core job is not in a status this call needs.
    error CoreStatus(uint256 jobId, uint8 status);

    // --- events: one per transition ---

    /// @notice The client's setBudget stored the job's plan (→ Planned; again while not funded).
    event Planned(uint256 indexed jobId, address indexed client, uint256 indexed prevPart, Plan plan);
    /// @notice The client funded the job (Planned → Open).
    event Opened(uint256 indexed jobId, address indexed token, uint256 budget, uint64 expiredAt);
    /// @notice A worker joined; with a minStake, `lockId` holds that much of its agent's stake.
    event Joined(uint256 indexed jobId, address indexed worker, bytes32 agentId, uint256 lockId);
    /// @notice A worker submitted its entry (the first also submits the core job).
    event EntrySubmitted(uint256 indexed jobId, address indexed worker, bytes32 deliverable);
    /// @notice The client rejected the submission(s) (Open → Disputed): the arbiter decides.
    event Disputed(uint256 indexed jobId, address indexed by, bytes32 reasonHash);
    /// @notice One winner's share of a settlement.
    event Awarded(uint256 indexed jobId, address indexed worker, uint16 bps, uint256 amount);
    /// @notice The job settled (→ Settled): `toWorkers` went to the winners, `toClient` back
    /// to the client, `slash` of the worker's stake to the client.
    event Settled(uint256 indexed jobId, Outcome outcome, uint256 toWorkers, uint256 toClient, uint256 slash);
}
