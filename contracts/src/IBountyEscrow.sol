// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title IBountyEscrow
/// @notice Types, errors and events of Surety's bounty escrow.
///
/// A bounty lives in one storage slot: a commitment to its terms and its worker (the first 26
/// bytes of keccak256(abi.encode(terms, worker)), 208 bits, so forging a second set of terms
/// with the same commitment takes ~2^104 hashes), its status and when that status began.
/// Every call after `post` passes the terms and the worker back (the worker is address(0)
/// until one is assigned, and again after an unclaim); the `Posted`, `Claimed`, `Assigned` and
/// `Unclaimed` events carry them, and a Surety node serves them from its index. One slot,
/// written once at post and updated in place after, keeps a whole bounty's life, post →
/// claim → submit → accept, under 200,000 gas.
interface IBountyEscrow {
    /// @notice Where a bounty is in its life. Accepted, Released, Resolved, Refunded and
    /// Cancelled are terminal: nothing moves a bounty out of them.
    enum Status {
        Open, // posted or unclaimed, nobody assigned (the zero value: a posted bounty needs no state write)
        Assigned, // a worker claimed it or the poster assigned one
        Submitted, // the worker submitted a result hash; the review window runs
        Disputed, // the poster rejected, or a party disputed; the arbiter decides
        Accepted, // the poster accepted: the worker was paid
        Released, // the review window passed without an answer: the worker took the payout
        Resolved, // the arbiter (or the arbiter timeout) split the funds
        Refunded, // the deadline passed without a submission: the poster got the funds back
        Cancelled // the poster withdrew it before anyone was assigned
    }

    /// @notice What a bounty was posted with. Fixed at `post`.
    struct Terms {
        address poster;
        address token; // address(0) for ETH
        uint256 amount; // what the escrow received (fee-on-transfer tokens: after the fee)
        address arbiter; // decides disputes
        uint64 deadline; // last second a result may be submitted
        uint32 reviewWindow; // seconds the poster has to accept or reject a submission
        uint16 feeBps; // protocol fee on the worker's payout, fixed at post
        uint256 minStake; // stake a claim locks in the StakeRegistry until the bounty ends (0: none)
        bytes32 specHash; // hash of the task specification
    }

    /// @notice A bounty as stored: one slot.
    struct Bounty {
        bytes26 commitment; // bytes26(keccak256(abi.encode(terms, worker))); zero: no such bounty
        Status status;
        // When the current status began (Assigned, Submitted and Disputed use it); for Open,
        // when claims open: at post, or CLAIM_WINDOW after an unclaim (the poster's turn).
        uint40 since;
    }

    // --- errors ---

    /// @notice No bounty has this id.
    error UnknownBounty(uint256 id);
    /// @notice The poster already posted a bounty with this salt: this is its id.
    error AlreadyPosted(uint256 id);
    /// @notice The terms and worker passed do not match the bounty's commitment.
    error TermsMismatch(uint256 id);
    /// @notice The bounty's status does not allow this call.
    error WrongStatus(uint256 id, Status status);
    /// @notice Only the poster may do this.
    error NotPoster(uint256 id, address caller);
    /// @notice Only the bounty's worker may do this.
    error NotWorker(uint256 id, address caller);
    /// @notice Only the bounty's arbiter may do this.
    error NotArbiter(uint256 id, address caller);
    /// @notice Only the poster or the worker may do this.
    error NotParty(uint256 id, address caller);
    /// @notice The deadline has passed.
    error DeadlinePassed(uint256 id, uint64 deadline);
    /// @notice The deadline has not passed yet.
    error DeadlineNotPassed(uint256 id, uint64 deadline);
    /// @notice The review window is still open.
    error ReviewWindowOpen(uint256 id, uint256 endsAt);
    /// @notice The review window has closed.
    error ReviewWindowClosed(uint256 id, uint256 endedAt);
    /// @notice The arbiter still has time to resolve.
    error ArbiterTimeNotUp(uint256 id, uint256 endsAt);
    /// @notice The worker still has until `endsAt` to submit before the poster may unclaim.
    error ClaimWindowOpen(uint256 id, uint256 endsAt);
    /// @notice The bounty was unclaimed: until `opensAt` only its poster may assign or cancel it.
    error ClaimsNotOpen(uint256 id, uint256 opensAt);
    /// @notice The bounty has a minimum stake: a claim on it holds until the deadline.
    error StakedClaim(uint256 id, uint256 minStake);
    /// @notice The worker's agent holds less free (unlocked, bound) stake than the bounty locks.
    error InsufficientStake(bytes32 agentId, uint256 stake, uint256 required);
    /// @notice The arbiter may not be the poster or the worker.
    error ArbiterIsParty(address arbiter);
    /// @notice Only a submission can be disputed: nothing was submitted.
    error NotSubmitted(uint256 id);
    /// @notice A slash above the stake the bounty locks.
    error SlashAboveLock(uint256 id, uint256 minStake, uint256 slash);
    /// @notice Amount zero, or nothing arrived.
    error InvalidAmount();
    /// @notice msg.value does not match: the amount for ETH, zero for a token.
    error InvalidValue(uint256 sent, uint256 expected);
    /// @notice The deadline is not in the future.
    error InvalidDeadline(uint64 deadline);
    /// @notice The review window is zero or longer than MAX_REVIEW_WINDOW.
    error InvalidReviewWindow(uint32 reviewWindow);
    /// @notice An address that must be set is zero.
    error ZeroAddress();
    /// @notice A split above 10,000 basis points.
    error InvalidSplit(uint16 workerBps);
    /// @notice A fee above MAX_FEE_BPS.
    error FeeTooHigh(uint16 feeBps, uint16 maxBps);
    /// @notice The caller is owed nothing in this token.
    error NothingToWithdraw(address account, address token);
    /// @notice A transfer failed (reverted, or a token returned false).
    error TransferFailed(address token, address to, uint256 amount);
    /// @notice Only the treasury may do this.
    error NotTreasury(address caller);

    // --- events: one per transition ---

    /// @notice A bounty was posted (→ Open).
    event Posted(uint256 indexed id, address indexed poster, address indexed token, Terms terms);
    /// @notice The poster cancelled it (Open → Cancelled); the amount went back to the poster.
    event Cancelled(uint256 indexed id, uint256 refund);
    /// @notice A worker claimed it (Open → Assigned).
    event Claimed(uint256 indexed id, address indexed worker, bytes32 agentId);
    /// @notice The poster assigned a worker (Open → Assigned).
    event Assigned(uint256 indexed id, address indexed worker);
    /// @notice The poster took the bounty back from a worker that had not submitted within
    /// the claim window (Assigned → Open).
    event Unclaimed(uint256 indexed id, address indexed worker);
    /// @notice The worker submitted a result (Assigned → Submitted).
    event Submitted(uint256 indexed id, address indexed worker, bytes32 resultHash);
    /// @notice The poster accepted (Submitted → Accepted); the payout went to the worker.
    event Accepted(uint256 indexed id, address indexed worker, uint256 payout, uint256 fee);
    /// @notice The review window passed and the worker took the payout (Submitted → Released).
    event Released(uint256 indexed id, address indexed worker, uint256 payout, uint256 fee);
    /// @notice The poster rejected or a party disputed a submission (Submitted → Disputed).
    event Disputed(uint256 indexed id, address indexed by, bytes32 reasonHash);
    /// @notice The arbiter, or the arbiter timeout, split the funds (Disputed → Resolved).
    event Resolved(uint256 indexed id, uint16 workerBps, uint256 workerPayout, uint256 posterRefund, uint256 fee);
    /// @notice The deadline passed with nothing submitted (Open/Assigned → Refunded).
    event Refunded(uint256 indexed id, uint256 refund);
    /// @notice A payout could not be pushed to `account` (it refused it, or ran out of gas), so
    /// it was credited: the account withdraws it with `withdraw`.
    event Credited(address indexed account, address indexed token, uint256 amount);
    /// @notice An account withdrew what it was credited.
    event Withdrawn(address indexed account, address indexed token, uint256 amount);
    /// @notice The treasury withdrew accrued fees.
    event FeesWithdrawn(address indexed treasury, address indexed token, uint256 amount);
    /// @notice The fee for new bounties changed.
    event FeeChanged(uint16 feeBps);
    /// @notice The fee recipient changed.
    event TreasuryChanged(address indexed treasury);
}
