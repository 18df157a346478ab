// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IBountyEscrow} from "./IBountyEscrow.sol";
import {IStakeRegistry} from "./IStakeRegistry.sol";
import {StakeRegistry} from "./StakeRegistry.sol";
import {Transfers} from "./IERC20.sol";
import {Owned} from "./Owned.sol";
import {ReentrancyGuard} from "./ReentrancyGuard.sol";

/// @title BountyEscrow
/// @notice Holds bounty funds (ETH or any ERC-20) from post to settlement.
///
/// Life of a bounty: post → (cancel) | claim/assign → submit → accept | reject → resolve;
/// refund after the deadline without a submission; release to the worker when the poster stays
/// silent past the review window; the arbiter's silence past ARBITER_TIMEOUT splits evenly;
/// unclaim (back to open) when a worker of a bounty without a minimum stake has not submitted
/// within CLAIM_WINDOW.
///
/// Payouts are pushed, with reentrancy protection: a settlement sends the worker's payout and
/// the poster's refund straight away, with at most PUSH_GAS gas for the recipient, after the
/// bounty's new status is stored (checks-effects-interactions), while every state-changing
/// function holds a re-entry lock. A recipient that refuses the payment, or spends more than
/// PUSH_GAS, cannot block the settlement: its amount is credited instead (`Credited`) and it
/// withdraws it later with `withdraw`. Fees accrue per token and the treasury withdraws them.
///
/// Stake at risk: claiming a bounty with a minimum stake locks that much of the worker agent's
/// stake in the StakeRegistry until the bounty ends; a dispute ruling may slash up to the lock
/// to the poster. Only a submission can be disputed: a claimer that does nothing gets nothing
/// (its lock holds until the deadline's refund, unslashed), and no ruling slashes a worker
/// that has not delivered. The arbiter is never the poster or the worker.
///
/// Squatting: a claim on a bounty without a minimum stake costs the claimer nothing but gas,
/// so it holds the bounty for CLAIM_WINDOW only: a worker that has not submitted by then may
/// be sent away by the poster (`unclaim`), and the poster then has CLAIM_WINDOW to assign or
/// cancel before anyone may claim again, so a squatter cannot win the race to the next claim.
/// A claim on a bounty with a minimum stake holds until the deadline: the claimer keeps that
/// stake locked all along, at the price the poster set.
contract BountyEscrow is IBountyEscrow, Owned, ReentrancyGuard {
    using Transfers for address;

    /// @notice The highest protocol fee, in basis points (10%).
    uint16 public constant MAX_FEE_BPS = 1000;
    /// @notice The longest review window a bounty may set.
    uint32 public constant MAX_REVIEW_WINDOW = 90 days;
    /// @notice How long an arbiter has to resolve a dispute before either party may split it evenly.
    uint256 public constant ARBITER_TIMEOUT = 30 days;
    /// @notice How long a worker of a bounty without a minimum stake holds it without
    /// submitting before the poster may unclaim it; and after an unclaim, how long only the
    /// poster may move it (assign, cancel) before claims reopen.
    uint256 public constant CLAIM_WINDOW = 1 hours;
    /// @notice The most gas a pushed payment gives its recipient.
    uint256 public constant PUSH_GAS = 100_000;

    /// @notice Where agents stake and claimers' stake is locked. This escrow creates it and is
    /// the only locker of bounty ids; the job locker fixed here (Surety's ERC-8183 hook) holds
    /// the other half of the lock ids, so no other account can ever lock or slash stake.
    IStakeRegistry public immutable stakeRegistry;

    /// @notice Receives protocol fees.
    address public treasury;
    /// @notice The fee new bounties are posted with.
    uint16 public feeBps;
    mapping(uint256 id => Bounty) private _bounties;
    /// @notice What each account may withdraw, per token (address(0): ETH): payouts it refused.
    mapping(address account => mapping(address token => uint256)) public owed;
    /// @notice Fees accrued per token, owed to the treasury.
    mapping(address token => uint256) public feesOwed;

    /// @notice Deploys the escrow and its StakeRegistry (stake in `stakeToken`, address(0) for
    /// ETH; unbonding waits `unbondDelay` seconds; below `minStake` an agent counts as unstaked;
    /// `jobLocker` is the registry's second locker, Surety's ERC-8183 hook, deployed after the
    /// escrow at an address the deployer predicts from its nonce; address(0) for none).
    constructor(
        address owner_,
        address treasury_,
        uint16 feeBps_,
        address stakeToken,
        uint64 unbondDelay,
        uint256 minStake,
        address jobLocker
    ) Owned(owner_) {
        if (owner_ == address(0) || treasury_ == address(0)) revert ZeroAddress();
        if (feeBps_ > MAX_FEE_BPS) revert FeeTooHigh(feeBps_, MAX_FEE_BPS);
        stakeRegistry = new StakeRegistry(stakeToken, unbondDelay, minStake, jobLocker);
        treasury = treasury_;
        feeBps = feeBps_;
        emit TreasuryChanged(treasury_);
        emit FeeChanged(feeBps_);
    }

    // --- posting ---

    /// @notice Posts a bounty of `amount` in `token` (address(0) for ETH, sent as msg.value;
    /// an ERC-20 must be approved first). Returns the bounty id, bountyId(msg.sender, salt):
    /// a salt posts once. The terms are in `Posted`.
    function post(
        address token,
        uint256 amount,
        address arbiter,
        uint64 deadline,
        uint32 reviewWindow,
        uint256 minStake,
        bytes32 specHash,
        bytes32 salt
    ) external payable nonReentrant returns (uint256 id) {
        id = bountyId(msg.sender, salt);
        Bounty storage b = _bounties[id];
        if (b.commitment != bytes26(0)) revert AlreadyPosted(id);
        if (amount == 0) revert InvalidAmount();
        if (arbiter == address(0)) revert ZeroAddress();
        if (arbiter == msg.sender) revert ArbiterIsParty(arbiter);
        if (deadline <= block.timestamp) revert InvalidDeadline(deadline);
        if (reviewWindow == 0 || reviewWindow > MAX_REVIEW_WINDOW) revert InvalidReviewWindow(reviewWindow);
        uint256 received = amount;
        if (token == address(0)) {
            if (msg.value != amount) revert InvalidValue(msg.value, amount);
        } else {
            if (msg.value != 0) revert InvalidValue(msg.value, 0);
            bool ok;
            (received, ok) = token.pull(msg.sender, amount);
            if (!ok) revert TransferFailed(token, address(this), amount);
            if (received == 0) revert InvalidAmount();
        }
        Terms memory t = Terms({
            poster: msg.sender,
            token: token,
            amount: received,
            arbiter: arbiter,
            deadline: deadline,
            reviewWindow: reviewWindow,
            feeBps: feeBps,
            minStake: minStake,
            specHash: specHash
        });
        _move(b, _commit(t, address(0)), Status.Open);
        emit Posted(id, msg.sender, token, t);
    }

    /// @notice The poster takes an unassigned bounty back, in full.
    function cancel(uint256 id, Terms calldata t) external nonReentrant {
        Bounty storage s = _load(id, t, address(0));
        if (msg.sender != t.poster) revert NotPoster(id, msg.sender);
        _expect(id, s, Status.Open);
        _move(s, s.commitment, Status.Cancelled);
        emit Cancelled(id, t.amount);
        _pay(t.poster, t.token, t.amount);
    }

    // --- assignment ---

    /// @notice A worker takes an open bounty. With a minimum stake, that much of the free
    /// stake `agentId` (the worker agent's keccak256(did)) holds under the caller is locked in
    /// the registry until the bounty ends. Without one, the poster may unclaim it from a
    /// worker that has not submitted within CLAIM_WINDOW.
    function claim(uint256 id, Terms calldata t, bytes32 agentId) external nonReentrant {
        Bounty storage s = _load(id, t, address(0));
        _expect(id, s, Status.Open);
        // An open bounty's `since` is when claims open: at post, or CLAIM_WINDOW after an unclaim.
        if (block.timestamp < s.since) revert ClaimsNotOpen(id, s.since);
        if (block.timestamp > t.deadline) revert DeadlinePassed(id, t.deadline);
        if (msg.sender == t.arbiter) revert ArbiterIsParty(msg.sender);
        _move(s, _commit(t, msg.sender), Status.Assigned);
        emit Claimed(id, msg.sender, agentId);
        if (t.minStake != 0) {
            try stakeRegistry.lock(id, agentId, msg.sender, t.minStake) {}
            catch (bytes memory reason) {
                // Too little free stake is the escrow's InsufficientStake (with the free amount);
                // anything else (an agent not bound to the caller, revoked, rotated) is the
                // registry's own error, passed on as it came.
                // forge-lint: disable-next-line(unsafe-typecast) the selector is the first 4 bytes
                if (bytes4(reason) == IStakeRegistry.InsufficientStake.selector) {
                    revert InsufficientStake(agentId, stakeRegistry.freeStakeOf(agentId, msg.sender), t.minStake);
                }
                assembly ("memory-safe") {
                    revert(add(reason, 32), mload(reason))
                }
            }
        }
    }

    /// @notice The poster picks the worker of an open bounty. Nothing is locked: the poster
    /// chose this worker, and only the worker can put its own stake at risk.
    function assign(uint256 id, Terms calldata t, address worker) external nonReentrant {
        Bounty storage s = _load(id, t, address(0));
        if (msg.sender != t.poster) revert NotPoster(id, msg.sender);
        _expect(id, s, Status.Open);
        if (worker == address(0)) revert ZeroAddress();
        if (worker == t.arbiter) revert ArbiterIsParty(worker);
        if (block.timestamp > t.deadline) revert DeadlinePassed(id, t.deadline);
        _move(s, _commit(t, worker), Status.Assigned);
        emit Assigned(id, worker);
    }

    /// @notice The poster takes back a bounty without a minimum stake from a worker that has
    /// not submitted within CLAIM_WINDOW of getting it (claimed or assigned): it is open again,
    /// and for CLAIM_WINDOW only the poster may move it (assign another worker, or cancel),
    /// so the worker sent away cannot take it again first. Nothing is paid and no stake is
    /// locked. Once the worker has submitted, its work is reviewed, never unclaimed.
    function unclaim(uint256 id, Terms calldata t, address worker) external nonReentrant {
        Bounty storage s = _load(id, t, worker);
        if (msg.sender != t.poster) revert NotPoster(id, msg.sender);
        _expect(id, s, Status.Assigned);
        if (t.minStake != 0) revert StakedClaim(id, t.minStake);
        uint256 endsAt = uint256(s.since) + CLAIM_WINDOW;
        if (block.timestamp <= endsAt) revert ClaimWindowOpen(id, endsAt);
        s.commitment = _commit(t, address(0));
        s.status = Status.Open;
        s.since = uint40(block.timestamp + CLAIM_WINDOW);
        emit Unclaimed(id, worker);
    }

    // --- work ---

    /// @notice The worker submits the hash of its result, by the deadline.
    function submit(uint256 id, Terms calldata t, address worker, bytes32 resultHash) external nonReentrant {
        Bounty storage s = _load(id, t, worker);
        if (msg.sender != worker) revert NotWorker(id, msg.sender);
        _expect(id, s, Status.Assigned);
        if (block.timestamp > t.deadline) revert DeadlinePassed(id, t.deadline);
        _move(s, s.commitment, Status.Submitted);
        emit Submitted(id, msg.sender, resultHash);
    }

    /// @notice The poster accepts the submission: the worker is paid the amount less the fee.
    function accept(uint256 id, Terms calldata t, address worker) external nonReentrant {
        Bounty storage s = _load(id, t, worker);
        if (msg.sender != t.poster) revert NotPoster(id, msg.sender);
        _expect(id, s, Status.Submitted);
        _move(s, s.commitment, Status.Accepted);
        (uint256 payout, uint256 fee) = _split(t, t.amount);
        emit Accepted(id, worker, payout, fee);
        _unlock(id, t, worker, 0);
        _pay(worker, t.token, payout);
    }

    /// @notice After the review window with no answer from the poster, the worker takes the payout.
    function release(uint256 id, Terms calldata t, address worker) external nonReentrant {
        Bounty storage s = _load(id, t, worker);
        if (msg.sender != worker) revert NotWorker(id, msg.sender);
        _expect(id, s, Status.Submitted);
        uint256 endsAt = uint256(s.since) + t.reviewWindow;
        if (block.timestamp <= endsAt) revert ReviewWindowOpen(id, endsAt);
        _move(s, s.commitment, Status.Released);
        (uint256 payout, uint256 fee) = _split(t, t.amount);
        emit Released(id, worker, payout, fee);
        _unlock(id, t, worker, 0);
        _pay(worker, t.token, payout);
    }

    // --- disputes ---

    /// @notice The poster rejects the submission within the review window: the arbiter decides.
    function reject(uint256 id, Terms calldata t, address worker, bytes32 reasonHash) external nonReentrant {
        Bounty storage s = _load(id, t, worker);
        if (msg.sender != t.poster) revert NotPoster(id, msg.sender);
        _expect(id, s, Status.Submitted);
        _requireInReview(id, s, t);
        _dispute(id, s, reasonHash);
    }

    /// @notice The poster or the worker disputes a submission within the review window: the
    /// arbiter decides. Only a submission can be disputed. A claimer that does no work cannot
    /// force a split (it gets nothing: the poster takes a `refund` after the deadline), and a
    /// poster cannot have its arbiter slash a claimer's lock before the worker has delivered
    /// anything (a worker that doubts the arbiter can walk away unslashed by not submitting).
    function dispute(uint256 id, Terms calldata t, address worker, bytes32 reasonHash) external nonReentrant {
        Bounty storage s = _load(id, t, worker);
        if (msg.sender != t.poster && msg.sender != worker) revert NotParty(id, msg.sender);
        if (s.status == Status.Assigned) revert NotSubmitted(id);
        _expect(id, s, Status.Submitted);
        _requireInReview(id, s, t);
        _dispute(id, s, reasonHash);
    }

    /// @notice The arbiter splits a disputed bounty: `workerBps` of the amount to the worker
    /// (less the fee on that share), the rest back to the poster; and slashes `slash` of the
    /// worker's locked stake to the poster (at most the bounty's minStake, and only when the
    /// worker's claim locked it).
    function resolve(uint256 id, Terms calldata t, address worker, uint16 workerBps, uint256 slash)
        external
        nonReentrant
    {
        Bounty storage s = _load(id, t, worker);
        if (msg.sender != t.arbiter) revert NotArbiter(id, msg.sender);
        _expect(id, s, Status.Disputed);
        if (workerBps > 10_000) revert InvalidSplit(workerBps);
        if (slash > t.minStake) revert SlashAboveLock(id, t.minStake, slash);
        _resolve(id, s, t, worker, workerBps, slash);
    }

    /// @notice When the arbiter has not resolved within ARBITER_TIMEOUT, either party splits
    /// the bounty evenly, so no dispute holds funds forever.
    function resolveExpired(uint256 id, Terms calldata t, address worker) external nonReentrant {
        Bounty storage s = _load(id, t, worker);
        if (msg.sender != t.poster && msg.sender != worker) revert NotParty(id, msg.sender);
        _expect(id, s, Status.Disputed);
        uint256 endsAt = uint256(s.since) + ARBITER_TIMEOUT;
        if (block.timestamp <= endsAt) revert ArbiterTimeNotUp(id, endsAt);
        _resolve(id, s, t, worker, 5_000, 0);
    }

    // --- refunds and withdrawals ---

    /// @notice After the deadline with nothing submitted, the poster gets the amount back.
    /// Anyone may call it: it can only pay the poster.
    function refund(uint256 id, Terms calldata t, address worker) external nonReentrant {
        Bounty storage s = _load(id, t, worker);
        if (s.status != Status.Open && s.status != Status.Assigned) revert WrongStatus(id, s.status);
        if (block.timestamp <= t.deadline) revert DeadlineNotPassed(id, t.deadline);
        _move(s, s.commitment, Status.Refunded);
        emit Refunded(id, t.amount);
        _unlock(id, t, worker, 0);
        _pay(t.poster, t.token, t.amount);
    }

    /// @notice Sends the caller everything it was credited in `token` (address(0): ETH).
    function withdraw(address token) external nonReentrant returns (uint256 amount) {
        amount = owed[msg.sender][token];
        if (amount == 0) revert NothingToWithdraw(msg.sender, token);
        owed[msg.sender][token] = 0;
        if (!token.send(msg.sender, amount, gasleft())) revert TransferFailed(token, msg.sender, amount);
        emit Withdrawn(msg.sender, token, amount);
    }

    /// @notice Sends the treasury the fees accrued in `token`, all but one base unit: the unit
    /// left keeps the slot non-zero, so the next fee costs 5,000 gas to record, not 22,100.
    function withdrawFees(address token) external nonReentrant returns (uint256 amount) {
        if (msg.sender != treasury) revert NotTreasury(msg.sender);
        uint256 accrued = feesOwed[token];
        if (accrued <= 1) revert NothingToWithdraw(msg.sender, token);
        amount = accrued - 1;
        feesOwed[token] = 1;
        if (!token.send(msg.sender, amount, gasleft())) revert TransferFailed(token, msg.sender, amount);
        emit FeesWithdrawn(msg.sender, token, amount);
    }

    // --- views ---

    /// @notice The id of the bounty `poster` posts with `salt`: the top 52 bits of
    /// keccak256(poster, salt), plus one (never 0). The poster picks the salt (a node derives it
    /// from the request envelope), so a request replayed, at any node that holds the poster's
    /// wallet, names the same id and reverts with AlreadyPosted instead of paying again.
    function bountyId(address poster, bytes32 salt) public pure returns (uint256) {
        return (uint256(keccak256(abi.encode(poster, salt))) >> 204) + 1;
    }

    /// @notice Bounty `id` as stored; reverts UnknownBounty for an id never posted.
    function bountyOf(uint256 id) external view returns (Bounty memory) {
        Bounty memory b = _bounties[id];
        if (b.commitment == bytes26(0)) revert UnknownBounty(id);
        return b;
    }

    /// @notice The commitment a bounty with these terms and this worker is stored under.
    function commitmentOf(Terms calldata t, address worker) external pure returns (bytes26) {
        return _commit(t, worker);
    }

    // --- administration ---

    /// @notice Sets the fee for bounties posted from now on (existing ones keep theirs).
    function setFee(uint16 feeBps_) external onlyOwner {
        if (feeBps_ > MAX_FEE_BPS) revert FeeTooHigh(feeBps_, MAX_FEE_BPS);
        feeBps = feeBps_;
        emit FeeChanged(feeBps_);
    }

    /// @notice Sets who receives fees from now on.
    function setTreasury(address treasury_) external onlyOwner {
        if (treasury_ == address(0)) revert ZeroAddress();
        treasury = treasury_;
        emit TreasuryChanged(treasury_);
    }

    // --- internals ---

    function _commit(Terms memory t, address worker) private pure returns (bytes26) {
        return bytes26(keccak256(abi.encode(t, worker)));
    }

    function _load(uint256 id, Terms calldata t, address worker) private view returns (Bounty storage s) {
        s = _bounties[id];
        bytes26 c = s.commitment;
        if (c == bytes26(0)) revert UnknownBounty(id);
        if (c != _commit(t, worker)) {
            // Open-only calls pass no worker; on a bounty that has one, the status is the reason.
            if (worker == address(0) && s.status != Status.Open) revert WrongStatus(id, s.status);
            revert TermsMismatch(id);
        }
    }

    /// @dev Moves a bounty to `status` now, under `commitment`: one slot write.
    function _move(Bounty storage s, bytes26 commitment, Status status) private {
        s.commitment = commitment;
        s.status = status;
        s.since = uint40(block.timestamp);
    }

    function _expect(uint256 id, Bounty storage s, Status want) private view {
        if (s.status != want) revert WrongStatus(id, s.status);
    }

    function _requireInReview(uint256 id, Bounty storage s, Terms calldata t) private view {
        uint256 endsAt = uint256(s.since) + t.reviewWindow;
        if (block.timestamp > endsAt) revert ReviewWindowClosed(id, endsAt);
    }

    function _dispute(uint256 id, Bounty storage s, bytes32 reasonHash) private {
        _move(s, s.commitment, Status.Disputed);
        emit Disputed(id, msg.sender, reasonHash);
    }

    function _resolve(uint256 id, Bounty storage s, Terms calldata t, address worker, uint16 workerBps, uint256 slash)
        private
    {
        _move(s, s.commitment, Status.Resolved);
        uint256 share = t.amount * workerBps / 10_000;
        uint256 posterRefund = t.amount - share;
        (uint256 payout, uint256 fee) = _split(t, share);
        emit Resolved(id, workerBps, payout, posterRefund, fee);
        _unlock(id, t, worker, slash);
        _pay(worker, t.token, payout);
        _pay(t.poster, t.token, posterRefund);
    }

    /// @dev Splits `gross` into the worker's payout and the bounty's fee, and accrues the fee.
    function _split(Terms calldata t, uint256 gross) private returns (uint256 payout, uint256 fee) {
        fee = gross * t.feeBps / 10_000;
        payout = gross - fee;
        if (fee != 0) feesOwed[t.token] += fee;
    }

    /// @dev Ends the stake lock of a bounty that reached a terminal status, slashing `slash` of
    /// it to the poster. A bounty without a minimum stake or without a worker has none; one
    /// whose worker the poster assigned has none either (the registry makes that a no-op, and
    /// refuses a slash of it).
    function _unlock(uint256 id, Terms calldata t, address worker, uint256 slash) private {
        if (t.minStake == 0 || worker == address(0)) return;
        stakeRegistry.unlock(id, worker, t.minStake, slash, t.poster);
    }

    /// @dev Pushes `amount` to `to`, or credits it when the push fails.
    function _pay(address to, address token, uint256 amount) private {
        if (amount == 0) return;
        if (!token.send(to, amount, PUSH_GAS)) {
            owed[to][token] += amount;
            emit Credited(to, token, amount);
        }
    }
}
