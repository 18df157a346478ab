// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IBountyEscrow} from "./IBountyEscrow.sol";
import {IStakeRegistry} from "./IStakeRegistry.sol";
import {Transfers} from "./IERC20.sol";

/// @title BountyEscrow
/// @notice Holds bounty funds (ETH or any ERC-20) from post to settlement.
///
/// Life of a bounty: post → (cancel) | claim/assign → submit → accept | reject → resolve;
/// refund after the deadline without a submission; release to the worker when the poster stays
/// silent past the review window; the arbiter's silence past ARBITER_TIMEOUT splits evenly.
///
/// Payouts are credited, then withdrawn (pull payments): settling never calls out to a
/// worker, poster or treasury, so none of them can block or re-enter a settlement, and a
/// token that refuses a recipient only delays that recipient's own withdrawal. Every function
/// that moves tokens is also guarded against re-entry, and each follows
/// checks-effects-interactions.
contract BountyEscrow is IBountyEscrow {
    using Transfers for address;

    /// @notice The highest protocol fee, in basis points (10%).
    uint16 public constant MAX_FEE_BPS = 1000;
    /// @notice The longest review window a bounty may set.
    uint32 public constant MAX_REVIEW_WINDOW = 90 days;
    /// @notice How long an arbiter has to resolve a dispute before either party may split it evenly.
    uint256 public constant ARBITER_TIMEOUT = 30 days;

    /// @notice Where claimers' stake is read.
    IStakeRegistry public immutable stakeRegistry;

    /// @notice May change the fee and the treasury.
    address public owner;
    /// @notice Receives protocol fees.
    address public treasury;
    /// @notice The fee new bounties are posted with.
    uint16 public feeBps;
    /// @notice The id the next bounty gets; ids start at 1.
    uint256 public nextId = 1;

    /// @notice keccak256(abi.encode(terms)) per bounty id; zero for an unknown id.
    mapping(uint256 id => bytes32) public termsHash;
    mapping(uint256 id => State) private _states;
    /// @notice What each account may withdraw, per token (address(0): ETH).
    mapping(address account => mapping(address token => uint256)) public owed;

    bool private transient _entered;

    modifier nonReentrant() {
        if (_entered) revert Reentrancy();
        _entered = true;
        _;
        _entered = false;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _;
    }

    constructor(IStakeRegistry registry, address owner_, address treasury_, uint16 feeBps_) {
        if (address(registry) == address(0) || owner_ == address(0) || treasury_ == address(0)) revert ZeroAddress();
        if (feeBps_ > MAX_FEE_BPS) revert FeeTooHigh(feeBps_, MAX_FEE_BPS);
        stakeRegistry = registry;
        owner = owner_;
        treasury = treasury_;
        feeBps = feeBps_;
        emit OwnershipTransferred(address(0), owner_);
        emit TreasuryChanged(treasury_);
        emit FeeChanged(feeBps_);
    }

    // --- posting ---

    /// @notice Posts a bounty of `amount` in `token` (address(0) for ETH, sent as msg.value;
    /// an ERC-20 must be approved first). Returns the bounty id; the terms are in `Posted`.
    function post(
        address token,
        uint256 amount,
        address arbiter,
        uint64 deadline,
        uint32 reviewWindow,
        uint256 minStake,
        bytes32 specHash
    ) external payable nonReentrant returns (uint256 id) {
        if (amount == 0) revert InvalidAmount();
        if (arbiter == address(0)) revert ZeroAddress();
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
        id = nextId++;
        termsHash[id] = keccak256(abi.encode(t));
        emit Posted(id, msg.sender, token, t);
    }

    /// @notice The poster takes an unassigned bounty back; the full amount is credited.
    function cancel(uint256 id, Terms calldata t) external {
        State storage s = _load(id, t);
        if (msg.sender != t.poster) revert NotPoster(id, msg.sender);
        _expect(id, s, Status.Open);
        _settle(s, Status.Cancelled);
        owed[t.poster][t.token] += t.amount;
        emit Cancelled(id, t.amount);
    }

    // --- assignment ---

    /// @notice A worker takes an open bounty. With a minimum stake, `agentId` (the worker
    /// agent's keccak256(did)) must hold that much stake under the caller in the registry.
    function claim(uint256 id, Terms calldata t, bytes32 agentId) external {
        State storage s = _load(id, t);
        _expect(id, s, Status.Open);
        if (block.timestamp > t.deadline) revert DeadlinePassed(id, t.deadline);
        if (t.minStake != 0) {
            uint256 stake = stakeRegistry.stakeOf(agentId, msg.sender);
            if (stake < t.minStake) revert InsufficientStake(agentId, stake, t.minStake);
        }
        s.worker = msg.sender;
        s.status = Status.Assigned;
        s.since = uint40(block.timestamp);
        emit Claimed(id, msg.sender, agentId);
    }

    /// @notice The poster picks the worker of an open bounty.
    function assign(uint256 id, Terms calldata t, address worker) external {
        State storage s = _load(id, t);
        if (msg.sender != t.poster) revert NotPoster(id, msg.sender);
        _expect(id, s, Status.Open);
        if (worker == address(0)) revert ZeroAddress();
        if (block.timestamp > t.deadline) revert DeadlinePassed(id, t.deadline);
        s.worker = worker;
        s.status = Status.Assigned;
        s.since = uint40(block.timestamp);
        emit Assigned(id, worker);
    }

    // --- work ---

    /// @notice The worker submits the hash of its result, by the deadline.
    function submit(uint256 id, Terms calldata t, bytes32 resultHash) external {
        State storage s = _load(id, t);
        if (msg.sender != s.worker) revert NotWorker(id, msg.sender);
        _expect(id, s, Status.Assigned);
        if (block.timestamp > t.deadline) revert DeadlinePassed(id, t.deadline);
        s.status = Status.Submitted;
        s.since = uint40(block.timestamp);
        emit Submitted(id, msg.sender, resultHash);
    }

    /// @notice The poster accepts the submission: the worker is credited the amount less the fee.
    function accept(uint256 id, Terms calldata t) external {
        State storage s = _load(id, t);
        if (msg.sender != t.poster) revert NotPoster(id, msg.sender);
        _expect(id, s, Status.Submitted);
        _settle(s, Status.Accepted);
        (uint256 payout, uint256 fee) = _payWorker(s.worker, t, t.amount);
        emit Accepted(id, s.worker, payout, fee);
    }

    /// @notice After the review window with no answer from the poster, the worker takes the payout.
    function release(uint256 id, Terms calldata t) external {
        State storage s = _load(id, t);
        if (msg.sender != s.worker) revert NotWorker(id, msg.sender);
        _expect(id, s, Status.Submitted);
        uint256 endsAt = uint256(s.since) + t.reviewWindow;
        if (block.timestamp <= endsAt) revert ReviewWindowOpen(id, endsAt);
        _settle(s, Status.Released);
        (uint256 payout, uint256 fee) = _payWorker(s.worker, t, t.amount);
        emit Released(id, s.worker, payout, fee);
    }

    // --- disputes ---

    /// @notice The poster rejects the submission within the review window: the arbiter decides.
    function reject(uint256 id, Terms calldata t, bytes32 reasonHash) external {
        State storage s = _load(id, t);
        if (msg.sender != t.poster) revert NotPoster(id, msg.sender);
        _expect(id, s, Status.Submitted);
        _requireInReview(id, s, t);
        _dispute(id, s, reasonHash);
    }

    /// @notice The poster or the worker disputes an assigned bounty, or a submission within
    /// the review window: the arbiter decides.
    function dispute(uint256 id, Terms calldata t, bytes32 reasonHash) external {
        State storage s = _load(id, t);
        if (msg.sender != t.poster && msg.sender != s.worker) revert NotParty(id, msg.sender);
        if (s.status == Status.Submitted) {
            _requireInReview(id, s, t);
        } else {
            _expect(id, s, Status.Assigned);
        }
        _dispute(id, s, reasonHash);
    }

    /// @notice The arbiter splits a disputed bounty: `workerBps` of the amount to the worker
    /// (less the fee on that share), the rest back to the poster.
    function resolve(uint256 id, Terms calldata t, uint16 workerBps) external {
        State storage s = _load(id, t);
        if (msg.sender != t.arbiter) revert NotArbiter(id, msg.sender);
        _expect(id, s, Status.Disputed);
        if (workerBps > 10_000) revert InvalidSplit(workerBps);
        _resolve(id, s, t, workerBps);
    }

    /// @notice When the arbiter has not resolved within ARBITER_TIMEOUT, either party splits
    /// the bounty evenly, so no dispute holds funds forever.
    function resolveExpired(uint256 id, Terms calldata t) external {
        State storage s = _load(id, t);
        if (msg.sender != t.poster && msg.sender != s.worker) revert NotParty(id, msg.sender);
        _expect(id, s, Status.Disputed);
        uint256 endsAt = uint256(s.since) + ARBITER_TIMEOUT;
        if (block.timestamp <= endsAt) revert ArbiterTimeNotUp(id, endsAt);
        _resolve(id, s, t, 5_000);
    }

    // --- refunds and withdrawals ---

    /// @notice After the deadline with nothing submitted, the poster is credited the amount.
    /// Anyone may call it: it can only pay the poster.
    function refund(uint256 id, Terms calldata t) external {
        State storage s = _load(id, t);
        if (s.status != Status.Open && s.status != Status.Assigned) revert WrongStatus(id, s.status);
        if (block.timestamp <= t.deadline) revert DeadlineNotPassed(id, t.deadline);
        _settle(s, Status.Refunded);
        owed[t.poster][t.token] += t.amount;
        emit Refunded(id, t.amount);
    }

    /// @notice Sends the caller everything it is owed in `token` (address(0): ETH).
    function withdraw(address token) external nonReentrant returns (uint256 amount) {
        amount = owed[msg.sender][token];
        if (amount == 0) revert NothingToWithdraw(msg.sender, token);
        owed[msg.sender][token] = 0;
        if (!token.send(msg.sender, amount)) revert TransferFailed(token, msg.sender, amount);
        emit Withdrawn(msg.sender, token, amount);
    }

    // --- views ---

    /// @notice The state of bounty `id`; reverts UnknownBounty for an id never posted.
    function stateOf(uint256 id) external view returns (State memory) {
        if (termsHash[id] == bytes32(0)) revert UnknownBounty(id);
        return _states[id];
    }

    /// @notice The hash the terms of a bounty must match.
    function hashTerms(Terms calldata t) external pure returns (bytes32) {
        return keccak256(abi.encode(t));
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

    /// @notice Hands the owner role to `newOwner`.
    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert ZeroAddress();
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    // --- internals ---

    function _load(uint256 id, Terms calldata t) private view returns (State storage s) {
        bytes32 h = termsHash[id];
        if (h == bytes32(0)) revert UnknownBounty(id);
        if (h != keccak256(abi.encode(t))) revert TermsMismatch(id);
        return _states[id];
    }

    function _expect(uint256 id, State storage s, Status want) private view {
        if (s.status != want) revert WrongStatus(id, s.status);
    }

    function _requireInReview(uint256 id, State storage s, Terms calldata t) private view {
        uint256 endsAt = uint256(s.since) + t.reviewWindow;
        if (block.timestamp > endsAt) revert ReviewWindowClosed(id, endsAt);
    }

    function _dispute(uint256 id, State storage s, bytes32 reasonHash) private {
        s.status = Status.Disputed;
        s.since = uint40(block.timestamp);
        emit Disputed(id, msg.sender, reasonHash);
    }

    function _settle(State storage s, Status terminal) private {
        s.status = terminal;
        s.since = uint40(block.timestamp);
    }

    function _resolve(uint256 id, State storage s, Terms calldata t, uint16 workerBps) private {
        _settle(s, Status.Resolved);
        uint256 share = t.amount * workerBps / 10_000;
        uint256 posterRefund = t.amount - share;
        (uint256 payout, uint256 fee) = share == 0 ? (0, 0) : _payWorker(s.worker, t, share);
        if (posterRefund != 0) owed[t.poster][t.token] += posterRefund;
        emit Resolved(id, workerBps, payout, posterRefund, fee);
    }

    /// @dev Credits the worker `gross` less the bounty's fee, and the fee to the treasury.
    function _payWorker(address worker, Terms calldata t, uint256 gross) private returns (uint256 payout, uint256 fee) {
        fee = gross * t.feeBps / 10_000;
        payout = gross - fee;
        owed[worker][t.token] += payout;
        if (fee != 0) owed[treasury][t.token] += fee;
    }
}
