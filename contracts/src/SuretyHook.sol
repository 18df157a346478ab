// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IERC8183} from "./IERC8183.sol";
import {IERC8183Hook} from "./IERC8183Hook.sol";
import {IERC165} from "./IERC165.sol";
import {ISuretyHook} from "./ISuretyHook.sol";
import {IStakeRegistry} from "./IStakeRegistry.sol";
import {IERC20, Transfers} from "./IERC20.sol";
import {ReentrancyGuard} from "./ReentrancyGuard.sol";
import {SuretyPool} from "./SuretyPool.sol";

/// @title SuretyHook
/// @notice Surety's extras for ERC-8183 jobs, the ERC-8183 interface unchanged: the hook and
/// the evaluator of record of every Surety job, with its SuretyPool the provider of record.
///
/// A client opens a standard job on the job escrow (the core) naming the pool as provider and
/// this hook as evaluator and hook, and puts the job's Plan in its setBudget's optParams
/// (stored here, only from the client, frozen once funded). After funding:
/// - workers `join` (a minStake locks that much of the worker agent's stake in the
///   StakeRegistry, where this hook is the job locker) and `submit` their entries; the first
///   entry submits the core job (the pool calls the core's submit);
/// - the client `approve`s (one worker) or `pick`s winners with shares (competing workers),
///   within the review window: the hook completes the core job, the core pays the pool, the
///   pool pays the winners in the same transaction;
/// - or the client `reject`s: a dispute; the `arbiter` resolves it with a split (all to the
///   client: the core's reject refunds it; otherwise the core completes and the pool pays the
///   winners their shares and the client the rest) and may slash the single worker's lock;
///   past its arbiterTime, `resolveExpired` splits half to the client, half to the workers;
/// - silence past the review window: `release` pays the first submitters (up to maxWinners)
///   evenly;
/// - `cancel`: the client takes the budget back when nothing was submitted and nobody joined
///   (or the entries have closed); `close` ends the stake locks of a job the core expired.
/// Losers and silence never slash; only a ruling on a single-worker job does.
///
/// Timing: the core lets anyone claimRefund after expiredAt, which would cut a review or a
/// dispute short. So funding is refused, and joins and submissions too, unless the review
/// window, the arbiter's time and SETTLE_WINDOW still fit before expiredAt: every path then
/// ends (by a call of a party) before the core's expiry, and a job that does expire (nobody
/// called in time) is only refunded to the client, its locks ended by `close`.
///
/// Milestones: each part is its own standard ERC-8183 job; a part's plan names the previous
/// part (`prevPart`, same client), and only the worker who joined that part may join it, so a
/// milestone job is a chain of jobs funded, submitted, approved and paid one by one.
contract SuretyHook is ISuretyHook, IERC8183Hook, ReentrancyGuard {
    using Transfers for address;

    /// @notice Time kept after the last review and ruling deadline before the core's expiry,
    /// for the parties to call release or resolveExpired.
    uint256 public constant SETTLE_WINDOW = 1 days;
    /// @notice The longest review window and arbiter time a plan may set.
    uint32 public constant MAX_WINDOW = 90 days;
    /// @notice The most workers one job takes.
    uint16 public constant MAX_ENTRIES = 20;
    /// @notice Basis points of a whole.
    uint256 private constant BPS = 10_000;

    /// @notice The ERC-8183 job escrow whose jobs this hook serves.
    IERC8183 public immutable core;
    /// @notice The provider of record of this hook's jobs; it pays their winners.
    SuretyPool public immutable pool;
    /// @notice Where a worker's stake is locked while it is entered in a job.
    IStakeRegistry public immutable stakeRegistry;

    mapping(uint256 jobId => Job) private _jobs;
    mapping(uint256 jobId => Plan) private _plans;
    /// @dev The workers of a job by the order they joined, 0 .. joined - 1.
    mapping(uint256 jobId => mapping(uint256 index => address)) private _workers;
    /// @notice Per job and worker: 0 not entered, 1 joined, 2 + k submitted as the job's
    /// (k+1)-th submission (the order silence and an arbiter timeout pay in).
    mapping(uint256 jobId => mapping(address worker => uint256)) public entryOf;

    modifier onlyCore() {
        if (msg.sender != address(core)) revert NotCore(msg.sender);
        _;
    }

    /// @notice Deploys the hook and its pool. The registry must name this hook as its job
    /// locker (the deployer predicts this address and passes it to BountyEscrow's constructor).
    constructor(IERC8183 core_, IStakeRegistry stakeRegistry_) {
        if (stakeRegistry_.jobLocker() != address(this)) {
            revert NotJobLocker(address(stakeRegistry_));
        }
        core = core_;
        stakeRegistry = stakeRegistry_;
        pool = new SuretyPool(core_);
    }

    // --- ERC-165 and the core's callbacks ---

    /// @inheritdoc IERC165
    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == type(IERC8183Hook).interfaceId || interfaceId == type(IERC165).interfaceId;
    }

    /// @inheritdoc IERC8183Hook
    function beforeAction(uint256 jobId, bytes4 selector, bytes calldata data) external onlyCore {
        if (selector == IERC8183.setBudget.selector) {
            (address caller,,, bytes memory optParams) = abi.decode(data, (address, address, uint256, bytes));
            _plan(jobId, caller, optParams);
        } else if (selector == IERC8183.fund.selector) {
            Phase ph = _jobs[jobId].phase;
            if (ph != Phase.Planned) revert WrongPhase(jobId, ph);
        }
        // submit, complete and reject: only the pool (provider) and this hook (evaluator) can
        // make them on a funded job, and they do so from the calls below.
    }

    /// @inheritdoc IERC8183Hook
    function afterAction(uint256 jobId, bytes4 selector, bytes calldata data) external onlyCore {
        if (selector == IERC8183.createJob.selector) {
            (, address provider, address evaluator) = abi.decode(data, (address, address, address));
            if (provider != address(pool) || evaluator != address(this)) {
                revert NotSuretyJob(jobId, provider, evaluator);
            }
        } else if (selector == IERC8183.fund.selector) {
            IERC8183.Job memory cj = core.getJob(jobId);
            Plan storage p = _plans[jobId];
            uint256 finishBy = block.timestamp + uint256(p.reviewWindow) + p.arbiterTime + SETTLE_WINDOW;
            if (finishBy >= cj.expiredAt) revert TooLate(jobId, finishBy, cj.expiredAt);
            Job storage j = _jobs[jobId];
            j.phase = Phase.Open;
            j.token = cj.paymentToken;
            j.expiredAt = cj.expiredAt > type(uint64).max ? type(uint64).max : uint64(cj.expiredAt);
            emit Opened(jobId, cj.paymentToken, cj.budget, j.expiredAt);
        }
    }

    // --- workers ---

    /// @notice The caller enters the funded job, as the worker of agent `agentId` (its
    /// keccak256(did)): with a minStake, that much of the agent's free stake under the caller
    /// is locked until the job settles, and the entry holds one of the job's maxEntries slots.
    /// Without a minStake a join reserves nothing (it is announced, not recorded): slots cost
    /// nothing then, so they go to the first submissions, and nobody can fill a job's slots
    /// with entries it never works on.
    function join(uint256 jobId, bytes32 agentId) external nonReentrant {
        (Job storage j, Plan storage p) = _open(jobId);
        _admit(jobId, j, p);
        uint256 lockId;
        if (p.minStake != 0) {
            _enter(jobId, j, p);
            lockId = lockIdOf(jobId, msg.sender);
            stakeRegistry.lock(lockId, agentId, msg.sender, p.minStake);
        }
        emit Joined(jobId, msg.sender, agentId, lockId);
    }

    /// @notice A worker submits its entry: one that joined, or, on a job without a minStake,
    /// any worker allowed to join while a slot is free. The first entry submits the core job
    /// (the pool, its provider, calls the core's submit); entries close when every slot has
    /// submitted, or at the last time a submission can still be reviewed and ruled on.
    function submit(uint256 jobId, bytes32 deliverable) external nonReentrant {
        (Job storage j, Plan storage p) = _open(jobId);
        uint256 entry = entryOf[jobId][msg.sender];
        if (entry >= 2) revert AlreadySubmitted(jobId, msg.sender);
        if (entry == 0) {
            if (p.minStake != 0) revert NotEntrant(jobId, msg.sender);
            _admit(jobId, j, p);
            _enter(jobId, j, p);
        } else {
            _inTime(jobId, j, p);
        }
        entryOf[jobId][msg.sender] = 2 + uint256(j.submitted);
        j.submitted += 1;
        if (j.submitted == p.maxEntries) j.closedAt = uint40(block.timestamp);
        emit EntrySubmitted(jobId, msg.sender, deliverable);
        if (j.submitted == 1) pool.submit(jobId, deliverable);
    }

    /// @notice After the review window with no answer from the client, the first submitters
    /// (up to maxWinners, in the order they submitted) share the budget evenly. Anyone may call.
    function release(uint256 jobId) external nonReentrant {
        (Job storage j, Plan storage p) = _open(jobId);
        if (j.submitted == 0) revert NothingSubmitted(jobId);
        uint256 endsAt = reviewEndOf(jobId);
        if (block.timestamp <= endsAt) revert ReviewWindowOpen(jobId, endsAt);
        (address[] memory w, uint16[] memory bps) = _firstSubmitters(jobId, p, BPS);
        _settle(jobId, j, p, w, bps, 0, Outcome.Released);
    }

    // --- the client ---

    /// @notice The client approves a single-worker job's submission: the worker is paid.
    function approve(uint256 jobId) external nonReentrant {
        (Job storage j, Plan storage p) = _reviewing(jobId);
        if (p.maxEntries != 1) revert InvalidSplit(jobId);
        address[] memory w = new address[](1);
        uint16[] memory bps = new uint16[](1);
        w[0] = _workers[jobId][0];
        bps[0] = 10_000;
        _settle(jobId, j, p, w, bps, 0, Outcome.Approved);
    }

    /// @notice The client picks the winners of the job and their shares (basis points summing
    /// to 10,000, at most maxWinners, each a worker that submitted). Losers get nothing and
    /// lose no stake. Closes the entries.
    function pick(uint256 jobId, address[] calldata winners, uint16[] calldata bps) external nonReentrant {
        (Job storage j, Plan storage p) = _reviewing(jobId);
        if (_checkSplit(jobId, p, winners, bps) != BPS) revert InvalidSplit(jobId);
        _settle(jobId, j, p, winners, bps, 0, Outcome.Approved);
    }

    /// @notice The client rejects the submission(s) within the review window: a dispute the
    /// arbiter resolves. Closes the entries.
    function reject(uint256 jobId, bytes32 reasonHash) external nonReentrant {
        (Job storage j,) = _reviewing(jobId);
        j.phase = Phase.Disputed;
        j.disputedAt = uint40(block.timestamp);
        emit Disputed(jobId, msg.sender, reasonHash);
    }

    /// @notice The client takes the budget back (the core's reject refunds it) when nothing
    /// was submitted and nobody holds a staked slot, or nobody can submit any more. (A job
    /// without a minStake can be cancelled until its first submission.)
    function cancel(uint256 jobId) external nonReentrant {
        (Job storage j, Plan storage p) = _open(jobId);
        if (msg.sender != j.client) revert NotClient(jobId, msg.sender);
        if (j.submitted != 0) revert WrongPhase(jobId, j.phase);
        if (j.joined != 0 && block.timestamp <= lastSubmitOf(jobId)) revert HasEntries(jobId);
        _settle(jobId, j, p, new address[](0), new uint16[](0), 0, Outcome.Cancelled);
    }

    // --- the arbiter ---

    /// @notice The arbiter rules on a dispute: `bps[i]` of the budget (after the core's fees)
    /// to `winners[i]` (workers that submitted, at most maxWinners, shares at most 10,000 in
    /// all), the rest to the client (nothing to the winners: the core's reject refunds the
    /// client). On a single-worker job it may slash up to minStake of the worker's lock to
    /// the client.
    function resolve(uint256 jobId, address[] calldata winners, uint16[] calldata bps, uint256 slash)
        external
        nonReentrant
    {
        (Job storage j, Plan storage p) = _disputed(jobId);
        if (msg.sender != p.arbiter) revert NotArbiter(jobId, msg.sender);
        _checkSplit(jobId, p, winners, bps);
        if (slash != 0 && (p.maxEntries != 1 || slash > p.minStake)) revert InvalidSlash(jobId, slash);
        _settle(jobId, j, p, winners, bps, slash, Outcome.Resolved);
    }

    /// @notice Past the arbiter's time, anyone splits the dispute: half to the client, half
    /// evenly to the first submitters (up to maxWinners). No slash.
    function resolveExpired(uint256 jobId) external nonReentrant {
        (Job storage j, Plan storage p) = _disputed(jobId);
        uint256 endsAt = uint256(j.disputedAt) + p.arbiterTime;
        if (block.timestamp <= endsAt) revert ArbiterTimeNotUp(jobId, endsAt);
        (address[] memory w, uint16[] memory bps) = _firstSubmitters(jobId, p, BPS / 2);
        _settle(jobId, j, p, w, bps, 0, Outcome.ResolvedExpired);
    }

    // --- expiry ---

    /// @notice Ends the stake locks of a job the core expired (claimRefund refunded the
    /// client) or rejected while open. Anyone may call.
    function close(uint256 jobId) external nonReentrant {
        Job storage j = _jobs[jobId];
        if (j.phase == Phase.None) revert UnknownJob(jobId);
        if (j.phase == Phase.Settled) revert WrongPhase(jobId, j.phase);
        IERC8183.JobStatus s = core.getJob(jobId).status;
        if (s != IERC8183.JobStatus.Expired && s != IERC8183.JobStatus.Rejected) revert CoreStatus(jobId, uint8(s));
        j.phase = Phase.Settled;
        _unlockAll(jobId, _plans[jobId], j.client, 0);
        emit Settled(jobId, Outcome.Expired, 0, 0, 0);
    }

    // --- views ---

    /// @notice The stake lock id of `worker` in job `jobId`: JOB_LOCK_BIT set (the registry's
    /// half for this hook), the rest from keccak256(jobId, worker); never a bounty id.
    function lockIdOf(uint256 jobId, address worker) public pure returns (uint256) {
        return (1 << 255) | (uint256(keccak256(abi.encode(jobId, worker))) >> 1);
    }

    /// @notice Job `jobId` as the hook keeps it.
    function jobOf(uint256 jobId) external view returns (Job memory) {
        return _jobs[jobId];
    }

    /// @notice The plan of job `jobId`.
    function planOf(uint256 jobId) external view returns (Plan memory) {
        return _plans[jobId];
    }

    /// @notice The workers that joined job `jobId`, in the order they joined.
    function joinedOf(uint256 jobId) external view returns (address[] memory w) {
        uint256 n = _jobs[jobId].joined;
        w = new address[](n);
        for (uint256 i; i < n; ++i) {
            w[i] = _workers[jobId][i];
        }
    }

    /// @notice The workers that submitted to job `jobId`, in the order they submitted.
    function submittersOf(uint256 jobId) public view returns (address[] memory w) {
        Job storage j = _jobs[jobId];
        w = new address[](j.submitted);
        for (uint256 i; i < j.joined; ++i) {
            address a = _workers[jobId][i];
            uint256 e = entryOf[jobId][a];
            if (e >= 2) w[e - 2] = a;
        }
    }

    /// @notice The last second a worker may join or submit: what still leaves the review
    /// window, the arbiter's time and SETTLE_WINDOW before the core's expiredAt.
    function lastSubmitOf(uint256 jobId) public view returns (uint256) {
        Plan storage p = _plans[jobId];
        uint256 need = uint256(p.reviewWindow) + p.arbiterTime + SETTLE_WINDOW;
        uint256 exp = _jobs[jobId].expiredAt;
        return exp > need ? exp - need : 0;
    }

    /// @notice The end of the review window: reviewWindow after the entries closed (the last
    /// slot submitted, or lastSubmitOf).
    function reviewEndOf(uint256 jobId) public view returns (uint256) {
        uint256 closed = _jobs[jobId].closedAt;
        if (closed == 0) closed = lastSubmitOf(jobId);
        return closed + _plans[jobId].reviewWindow;
    }

    // --- internals ---

    /// @dev Checks and stores the plan of the client's setBudget.
    function _plan(uint256 jobId, address caller, bytes memory optParams) private {
        Job storage j = _jobs[jobId];
        if (j.phase != Phase.None && j.phase != Phase.Planned) revert WrongPhase(jobId, j.phase);
        // The core lets only the client and the provider set a budget; the provider is the pool.
        if (caller == address(pool)) revert NotClient(jobId, caller);
        if (optParams.length != 8 * 32) revert InvalidPlan("encoding"); // abi.encode(Plan): eight words
        Plan memory p = abi.decode(optParams, (Plan));
        if (p.arbiter == address(0) || p.arbiter == caller) revert InvalidPlan("arbiter");
        if (p.reviewWindow == 0 || p.reviewWindow > MAX_WINDOW) revert InvalidPlan("reviewWindow");
        if (p.arbiterTime == 0 || p.arbiterTime > MAX_WINDOW) revert InvalidPlan("arbiterTime");
        if (p.maxEntries == 0 || p.maxEntries > MAX_ENTRIES) revert InvalidPlan("maxEntries");
        if (p.maxWinners == 0 || p.maxWinners > p.maxEntries) revert InvalidPlan("maxWinners");
        if (p.worker != address(0) && (p.maxEntries != 1 || p.worker == caller || p.worker == p.arbiter)) {
            revert InvalidPlan("worker");
        }
        if (p.prevPart != 0) {
            if (
                p.prevPart == jobId || p.maxEntries != 1 || _jobs[p.prevPart].client != caller
                    || _plans[p.prevPart].maxEntries != 1
            ) {
                revert InvalidPlan("prevPart");
            }
        }
        _plans[jobId] = p;
        j.client = caller;
        j.phase = Phase.Planned;
        emit Planned(jobId, caller, p.prevPart, p);
    }

    function _open(uint256 jobId) private view returns (Job storage j, Plan storage p) {
        j = _jobs[jobId];
        if (j.phase != Phase.Open) {
            if (j.phase == Phase.None) revert UnknownJob(jobId);
            revert WrongPhase(jobId, j.phase);
        }
        p = _plans[jobId];
    }

    /// @dev An open job with a submission, the client calling, within the review window.
    function _reviewing(uint256 jobId) private view returns (Job storage j, Plan storage p) {
        (j, p) = _open(jobId);
        if (msg.sender != j.client) revert NotClient(jobId, msg.sender);
        if (j.submitted == 0) revert NothingSubmitted(jobId);
        uint256 endsAt = reviewEndOf(jobId);
        if (block.timestamp > endsAt) revert ReviewWindowClosed(jobId, endsAt);
    }

    function _disputed(uint256 jobId) private view returns (Job storage j, Plan storage p) {
        j = _jobs[jobId];
        if (j.phase != Phase.Disputed) {
            if (j.phase == Phase.None) revert UnknownJob(jobId);
            revert WrongPhase(jobId, j.phase);
        }
        p = _plans[jobId];
    }

    /// @dev Whether the caller may enter: not entered yet, not the client nor the arbiter, the
    /// named worker if the plan names one, the previous part's worker for a milestone part,
    /// and in time.
    function _admit(uint256 jobId, Job storage j, Plan storage p) private view {
        if (entryOf[jobId][msg.sender] != 0) revert AlreadyJoined(jobId, msg.sender);
        if (msg.sender == j.client || msg.sender == p.arbiter) revert NotAllowed(jobId, msg.sender);
        if (p.worker != address(0) && msg.sender != p.worker) revert NotAllowed(jobId, msg.sender);
        if (p.prevPart != 0 && entryOf[p.prevPart][msg.sender] == 0) revert NotAllowed(jobId, msg.sender);
        _inTime(jobId, j, p);
    }

    /// @dev Records the caller's entry in a free slot.
    function _enter(uint256 jobId, Job storage j, Plan storage p) private {
        if (j.joined >= p.maxEntries) revert JobFull(jobId);
        entryOf[jobId][msg.sender] = 1;
        _workers[jobId][j.joined] = msg.sender;
        j.joined += 1;
    }

    function _inTime(uint256 jobId, Job storage j, Plan storage p) private view {
        if (block.timestamp > lastSubmitOf(jobId)) {
            revert TooLate(
                jobId, block.timestamp + uint256(p.reviewWindow) + p.arbiterTime + SETTLE_WINDOW, j.expiredAt
            );
        }
    }

    /// @dev Checks winners and shares; returns the shares' sum.
    function _checkSplit(uint256 jobId, Plan storage p, address[] calldata winners, uint16[] calldata bps)
        private
        view
        returns (uint256 sum)
    {
        if (winners.length != bps.length || winners.length > p.maxWinners) revert InvalidSplit(jobId);
        for (uint256 i; i < winners.length; ++i) {
            if (entryOf[jobId][winners[i]] < 2 || bps[i] == 0) revert InvalidSplit(jobId);
            for (uint256 k; k < i; ++k) {
                if (winners[k] == winners[i]) revert InvalidSplit(jobId);
            }
            sum += bps[i];
        }
        if (sum > BPS) revert InvalidSplit(jobId);
    }

    /// @dev The first min(submitted, maxWinners) submitters, sharing `total` bps evenly (the
    /// first takes the rounding remainder).
    function _firstSubmitters(uint256 jobId, Plan storage p, uint256 total)
        private
        view
        returns (address[] memory w, uint16[] memory bps)
    {
        address[] memory subs = submittersOf(jobId);
        uint256 n = subs.length < p.maxWinners ? subs.length : p.maxWinners;
        w = new address[](n);
        bps = new uint16[](n);
        for (uint256 i; i < n; ++i) {
            w[i] = subs[i];
            // forge-lint: disable-next-line(unsafe-typecast) total <= 10,000
            bps[i] = uint16(total / n);
        }
        // forge-lint: disable-next-line(unsafe-typecast) total <= 10,000
        bps[0] += uint16(total % n);
    }

    /// @dev Settles a job: nothing to the workers → the core's reject refunds the client;
    /// otherwise the core completes (paying the pool the budget less its fees) and the pool
    /// pays each winner its share of that and the client the rest, the evaluator fee (paid to
    /// this hook as the evaluator of record) to the arbiter. Then every stake lock ends, the
    /// first worker's less `slash` (to the client).
    function _settle(
        uint256 jobId,
        Job storage j,
        Plan storage p,
        address[] memory winners,
        uint16[] memory bps,
        uint256 slash,
        Outcome outcome
    ) private {
        j.phase = Phase.Settled;
        if (j.closedAt == 0) j.closedAt = uint40(block.timestamp);
        address client = j.client;
        uint256 sum;
        for (uint256 i; i < bps.length; ++i) {
            sum += bps[i];
        }
        uint256 toWorkers;
        uint256 toClient;
        if (sum == 0) {
            toClient = core.getJob(jobId).budget;
            core.reject(jobId, bytes32(uint256(outcome)), "");
        } else {
            (toWorkers, toClient) = _payOut(jobId, j, p.arbiter, winners, bps, sum, outcome);
        }
        _unlockAll(jobId, p, client, slash);
        emit Settled(jobId, outcome, toWorkers, toClient, slash);
    }

    /// @dev Completes the core job and has the pool pay what it received: each winner its
    /// share, the client the rest, the arbiter the evaluator fee this hook received.
    function _payOut(
        uint256 jobId,
        Job storage j,
        address arbiter,
        address[] memory winners,
        uint16[] memory bps,
        uint256 sum,
        Outcome outcome
    ) private returns (uint256 toWorkers, uint256 toClient) {
        address token = j.token;
        (uint256 net, uint256 evaluatorFee) = _complete(jobId, token, outcome);
        toWorkers = net * sum / BPS;
        toClient = net - toWorkers;
        (address[] memory to, uint256[] memory amounts) = _awards(jobId, winners, bps, sum, toWorkers);
        uint256 n = winners.length;
        to[n] = j.client;
        amounts[n] = toClient;
        if (evaluatorFee != 0) {
            if (!token.send(address(pool), evaluatorFee, gasleft())) {
                revert SuretyPool.TransferFailed(token, address(pool), evaluatorFee);
            }
            to[n + 1] = arbiter;
            amounts[n + 1] = evaluatorFee;
        }
        pool.pay(token, to, amounts);
    }

    /// @dev Completes the core job; returns what the pool and this hook received.
    function _complete(uint256 jobId, address token, Outcome outcome)
        private
        returns (uint256 net, uint256 evaluatorFee)
    {
        uint256 poolBefore = IERC20(token).balanceOf(address(pool));
        uint256 hookBefore = IERC20(token).balanceOf(address(this));
        core.complete(jobId, bytes32(uint256(outcome)), "");
        net = IERC20(token).balanceOf(address(pool)) - poolBefore;
        evaluatorFee = IERC20(token).balanceOf(address(this)) - hookBefore;
    }

    /// @dev The winners and `total` split by `bps` (summing to `sum`), the last share taking
    /// the rounding remainder, in arrays two longer (for the client and the arbiter).
    function _awards(uint256 jobId, address[] memory winners, uint16[] memory bps, uint256 sum, uint256 total)
        private
        returns (address[] memory to, uint256[] memory amounts)
    {
        uint256 n = winners.length;
        to = new address[](n + 2);
        amounts = new uint256[](n + 2);
        uint256 left = total;
        for (uint256 i; i < n; ++i) {
            uint256 a = i + 1 == n ? left : total * bps[i] / sum;
            left -= a;
            to[i] = winners[i];
            amounts[i] = a;
            emit Awarded(jobId, winners[i], bps[i], a);
        }
    }

    /// @dev Ends the stake lock of every worker that joined; the first's less `slash`.
    function _unlockAll(uint256 jobId, Plan storage p, address client, uint256 slash) private {
        uint256 stake = p.minStake;
        if (stake == 0) return;
        uint256 n = _jobs[jobId].joined;
        for (uint256 i; i < n; ++i) {
            address w = _workers[jobId][i];
            stakeRegistry.unlock(lockIdOf(jobId, w), w, stake, i == 0 ? slash : 0, client);
        }
    }
}
