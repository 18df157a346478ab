// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test, Common} from "./lib/Test.sol";
import {createAddress} from "./lib/HookFixture.sol";
import {BountyEscrow} from "../src/BountyEscrow.sol";
import {StakeRegistry} from "../src/StakeRegistry.sol";
import {JobEscrow} from "../src/JobEscrow.sol";
import {ISuretyHook} from "../src/ISuretyHook.sol";
import {SuretyHook} from "../src/SuretyHook.sol";
import {SuretyPool} from "../src/SuretyPool.sol";
import {MockERC20} from "./mocks/Tokens.sol";

/// @notice Drives Surety jobs through the hook with random, well-formed calls (single-worker
/// and competing jobs, stake or none, every settlement path, time passing, the core's expiry)
/// and mirrors what must hold. A call the contracts refuse reverts the handler call.
contract HookHandler is Common {
    JobEscrow public immutable core;
    SuretyHook public immutable hook;
    SuretyPool public immutable pool;
    StakeRegistry public immutable registry;
    MockERC20 public immutable token;
    address public constant CLIENT = address(0xC11E);
    address public constant ARBITER = address(0xA4B1);
    address public constant TREASURY = address(0x7EA5);
    address[4] public workers = [address(0x1001), address(0x1002), address(0x1003), address(0x1004)];

    uint256[] public jobs;
    mapping(uint256 jobId => uint256) public budgetOf;
    mapping(uint256 jobId => uint256) public paidOf; // what left the core for the job: payouts, refunds, fees
    bool public overpaid;
    uint256 public settled;

    constructor(JobEscrow core_, SuretyHook hook_, StakeRegistry registry_, MockERC20 token_) {
        core = core_;
        hook = hook_;
        pool = hook_.pool();
        registry = registry_;
        token = token_;
        token.mint(CLIENT, 1e40);
        vm.prank(CLIENT);
        token.approve(address(core), type(uint256).max);
        for (uint256 i; i < workers.length; ++i) {
            vm.deal(workers[i], 100 ether);
            vm.startPrank(workers[i]);
            registry.bind(agentOf(workers[i]), "jws");
            registry.stake{value: 100 ether}(agentOf(workers[i]), 100 ether);
            vm.stopPrank();
        }
    }

    function agentOf(address w) public pure returns (bytes32) {
        return keccak256(abi.encode(w));
    }

    function jobCount() external view returns (uint256) {
        return jobs.length;
    }

    function workerCount() external view returns (uint256) {
        return workers.length;
    }

    function _job(uint256 seed) internal view returns (uint256) {
        require(jobs.length != 0, "no jobs");
        return jobs[seed % jobs.length];
    }

    /// @dev The first job from `seed` on in `phase` (with a submission when `needsEntry`).
    function _find(uint256 seed, ISuretyHook.Phase phase, bool needsEntry) internal view returns (uint256) {
        return _findIn(seed, phase, needsEntry, false);
    }

    /// @dev _find, and when `inReview`, still within its review window.
    function _findIn(uint256 seed, ISuretyHook.Phase phase, bool needsEntry, bool inReview)
        internal
        view
        returns (uint256)
    {
        uint256 n = jobs.length;
        require(n != 0, "no jobs");
        for (uint256 i; i < n; ++i) {
            uint256 id = jobs[(seed + i) % n];
            ISuretyHook.Job memory j = hook.jobOf(id);
            if (j.phase != phase || (needsEntry && j.submitted == 0)) continue;
            if (inReview && block.timestamp > hook.reviewEndOf(id)) continue;
            return id;
        }
        revert("none");
    }

    function open(uint96 budget, uint8 entries, uint8 winners, bool staked) external {
        uint256 amount = bound(budget, 1, 1e30);
        uint16 maxEntries = uint16(bound(entries, 1, 4));
        uint16 maxWinners = uint16(bound(winners, 1, maxEntries));
        ISuretyHook.Plan memory p = ISuretyHook.Plan({
            arbiter: ARBITER,
            reviewWindow: 2 days,
            arbiterTime: 3 days,
            maxEntries: maxEntries,
            maxWinners: maxWinners,
            minStake: staked ? 1 ether : 0,
            worker: address(0),
            prevPart: 0
        });
        vm.startPrank(CLIENT);
        uint256 id = core.createJob(address(pool), address(hook), block.timestamp + 20 days, "j", address(hook), 0);
        core.setBudget(id, address(token), amount, abi.encode(p));
        core.fund(id, amount, "");
        vm.stopPrank();
        jobs.push(id);
        budgetOf[id] = amount;
    }

    function join(uint256 j, uint256 w) external {
        uint256 id = _find(j, ISuretyHook.Phase.Open, false);
        address worker = workers[w % workers.length];
        for (uint256 i; i < workers.length && hook.entryOf(id, worker) != 0; ++i) {
            worker = workers[(w + i) % workers.length];
        }
        vm.prank(worker);
        hook.join(id, agentOf(worker));
    }

    function submit(uint256 j, uint256 w) external {
        uint256 id = _find(j, ISuretyHook.Phase.Open, false);
        address worker = workers[w % workers.length];
        for (uint256 i; i < workers.length && hook.entryOf(id, worker) >= 2; ++i) {
            worker = workers[(w + i) % workers.length];
        }
        if (hook.entryOf(id, worker) == 0) {
            vm.prank(worker);
            hook.join(id, agentOf(worker)); // join and submit in one step
        }
        vm.prank(worker);
        hook.submit(id, keccak256(abi.encode(id, worker)));
    }

    /// @dev Runs `call` and books what left the core and the pool for the job.
    function _settle(uint256 id, address who, bytes memory call) internal {
        uint256 before =
            token.balanceOf(address(core)) + token.balanceOf(address(pool)) - pool.totalOwed(address(token));
        vm.prank(who);
        (bool ok, bytes memory ret) = address(hook).call(call);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
        uint256 afterwards =
            token.balanceOf(address(core)) + token.balanceOf(address(pool)) - pool.totalOwed(address(token));
        paidOf[id] += before - afterwards;
        if (paidOf[id] > budgetOf[id]) overpaid = true;
        settled++;
    }

    /// @dev An open job within its review window with a submission: one there is, or one a
    /// worker submits to now.
    function _reviewable(uint256 seed) internal returns (uint256 id) {
        uint256 n = jobs.length;
        require(n != 0, "no jobs");
        for (uint256 i; i < n; ++i) {
            id = jobs[(seed + i) % n];
            ISuretyHook.Job memory j = hook.jobOf(id);
            if (j.phase != ISuretyHook.Phase.Open || block.timestamp > hook.reviewEndOf(id)) continue;
            if (j.submitted != 0) return id;
            if (block.timestamp > hook.lastSubmitOf(id)) continue;
            address w = workers[seed % workers.length];
            if (hook.entryOf(id, w) == 0) {
                if (j.joined == hook.planOf(id).maxEntries) continue;
                vm.prank(w);
                hook.join(id, agentOf(w));
            }
            vm.prank(w);
            hook.submit(id, keccak256(abi.encode(id, w)));
            return id;
        }
        revert("none");
    }

    /// @dev A disputed job: one there is, or one the client rejects now.
    function _disputedJob(uint256 seed) internal returns (uint256 id) {
        uint256 n = jobs.length;
        require(n != 0, "no jobs");
        for (uint256 i; i < n; ++i) {
            id = jobs[(seed + i) % n];
            if (hook.jobOf(id).phase == ISuretyHook.Phase.Disputed) return id;
        }
        id = _reviewable(seed);
        vm.prank(CLIENT);
        hook.reject(id, 0);
    }

    function pick(uint256 j, uint16 share) external {
        uint256 id = _reviewable(j);
        address[] memory subs = hook.submittersOf(id);
        require(subs.length != 0, "none");
        ISuretyHook.Plan memory p = hook.planOf(id);
        if (p.maxEntries == 1) return _settle(id, CLIENT, abi.encodeCall(hook.approve, (id)));
        uint256 n = subs.length < 2 || p.maxWinners < 2 ? 1 : 2;
        address[] memory w = new address[](n);
        uint16[] memory bps = new uint16[](n);
        w[0] = subs[0];
        bps[0] = 10_000;
        if (n == 2) {
            w[1] = subs[1];
            bps[0] = uint16(bound(share, 1, 9_999));
            bps[1] = 10_000 - bps[0];
        }
        _settle(id, CLIENT, abi.encodeCall(hook.pick, (id, w, bps)));
    }

    function reject(uint256 j) external {
        _disputedJob(j);
    }

    function resolve(uint256 j, uint16 share, uint256 slash) external {
        uint256 id = _disputedJob(j);
        address[] memory subs = hook.submittersOf(id);
        ISuretyHook.Plan memory p = hook.planOf(id);
        uint16 bps0 = uint16(bound(share, 0, 10_000));
        address[] memory w = new address[](bps0 == 0 ? 0 : 1);
        uint16[] memory bps = new uint16[](w.length);
        if (bps0 != 0) {
            w[0] = subs[0];
            bps[0] = bps0;
        }
        uint256 s = p.maxEntries == 1 ? bound(slash, 0, p.minStake) : 0;
        _settle(id, ARBITER, abi.encodeCall(hook.resolve, (id, w, bps, s)));
    }

    function release(uint256 j) external {
        uint256 id = _reviewable(j);
        if (block.timestamp <= hook.reviewEndOf(id)) vm.warp(hook.reviewEndOf(id) + 1);
        _settle(id, address(this), abi.encodeCall(hook.release, (id)));
    }

    function resolveExpired(uint256 j) external {
        uint256 id = _disputedJob(j);
        uint256 endsAt = uint256(hook.jobOf(id).disputedAt) + hook.planOf(id).arbiterTime;
        if (block.timestamp <= endsAt) vm.warp(endsAt + 1);
        _settle(id, address(this), abi.encodeCall(hook.resolveExpired, (id)));
    }

    function cancel(uint256 j) external {
        uint256 id = _find(j, ISuretyHook.Phase.Open, false);
        _settle(id, CLIENT, abi.encodeCall(hook.cancel, (id)));
    }

    function expire(uint256 j, bool wait) external {
        uint256 id = _job(j);
        uint256 exp = core.getJob(id).expiredAt;
        if (wait && block.timestamp < exp + 1 hours) vm.warp(exp + 1 hours);
        uint256 before = token.balanceOf(address(core));
        core.claimRefund(id);
        paidOf[id] += before - token.balanceOf(address(core));
        if (paidOf[id] > budgetOf[id]) overpaid = true;
        hook.close(id);
    }

    function warp(uint32 secs) external {
        vm.warp(block.timestamp + bound(secs, 1, 2 days));
    }
}

contract SuretyHookInvariantTest is Test {
    HookHandler internal handler;
    SuretyHook internal hook;
    StakeRegistry internal registry;
    MockERC20 internal token;

    function setUp() public {
        vm.warp(1_700_000_000);
        token = new MockERC20("T", "T");
        JobEscrow core = new JobEscrow(address(this), address(0x7EA5));
        address predicted = createAddress(address(this), vm.getNonce(address(this)) + 1);
        BountyEscrow escrow = new BountyEscrow(address(this), address(0x7EA5), 0, address(0), 7 days, 0, predicted);
        registry = StakeRegistry(address(escrow.stakeRegistry()));
        hook = new SuretyHook(core, registry);
        core.setHookWhitelist(address(hook), true);
        core.setPlatformFee(250, address(0x7EA5));
        handler = new HookHandler(core, hook, registry, token);
        targetContract(address(handler));
    }

    /// @notice The pool holds nothing between transactions but credits.
    function invariant_poolHoldsOnlyCredits() public view {
        vm.assertEq(
            token.balanceOf(address(hook.pool())), hook.pool().totalOwed(address(token)), "pool balance == credits"
        );
        vm.assertEq(token.balanceOf(address(hook)), 0, "the hook holds nothing");
    }

    /// @notice No job pays out more than its budget.
    function invariant_noJobPaysMoreThanItsBudget() public view {
        vm.assertFalse(handler.overpaid(), "overpaid");
    }

    /// @notice A worker's locked stake is minStake for each entry of a job not settled.
    function invariant_locksFollowOpenEntries() public view {
        uint256 n = handler.workerCount();
        uint256 jobs = handler.jobCount();
        for (uint256 w; w < n; ++w) {
            address worker = handler.workers(w);
            uint256 want;
            for (uint256 k; k < jobs; ++k) {
                uint256 id = handler.jobs(k);
                ISuretyHook.Plan memory p = hook.planOf(id);
                bool open = hook.jobOf(id).phase != ISuretyHook.Phase.Settled && hook.entryOf(id, worker) != 0;
                if (open) want += p.minStake;
                bool locked = registry.lockedAgent(hook.lockIdOf(id, worker)) != 0;
                vm.assertEq(locked, open && p.minStake != 0, "a lock per open staked entry");
            }
            vm.assertEq(uint256(registry.recordOf(handler.agentOf(worker), worker).locked), want, "locked sum");
        }
    }
}
