// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {HookFixture, createAddress} from "./lib/HookFixture.sol";
import {IERC8183} from "../src/IERC8183.sol";
import {IERC8183Hook} from "../src/IERC8183Hook.sol";
import {IERC165} from "../src/IERC165.sol";
import {ISuretyHook} from "../src/ISuretyHook.sol";
import {IStakeRegistry} from "../src/IStakeRegistry.sol";
import {SuretyHook} from "../src/SuretyHook.sol";
import {SuretyPool} from "../src/SuretyPool.sol";
import {StakeRegistry} from "../src/StakeRegistry.sol";
import {MockERC20, FeeOnTransferToken} from "./mocks/Tokens.sol";

/// @notice A token that refuses transfers to blocked recipients (a USDC-style blocklist).
contract BlockingToken is MockERC20 {
    mapping(address => bool) public blocked;

    constructor() MockERC20("Block", "BLK") {}

    function setBlocked(address a, bool b) external {
        blocked[a] = b;
    }

    function transfer(address to, uint256 amount) external override returns (bool) {
        if (blocked[to]) return false;
        _move(msg.sender, to, amount);
        return true;
    }
}

/// @notice SuretyHook: a single worker's path and every revert of it.
contract SuretyHookTest is HookFixture {
    event Planned(uint256 indexed jobId, address indexed client, uint256 indexed prevPart, ISuretyHook.Plan plan);
    event Opened(uint256 indexed jobId, address indexed token, uint256 budget, uint64 expiredAt);
    event Joined(uint256 indexed jobId, address indexed worker, bytes32 agentId, uint256 lockId);
    event EntrySubmitted(uint256 indexed jobId, address indexed worker, bytes32 deliverable);
    event Disputed(uint256 indexed jobId, address indexed by, bytes32 reasonHash);
    event Awarded(uint256 indexed jobId, address indexed worker, uint16 bps, uint256 amount);
    event Settled(
        uint256 indexed jobId, ISuretyHook.Outcome outcome, uint256 toWorkers, uint256 toClient, uint256 slash
    );

    // --- construction ---

    function test_constructor_wiresCorePoolAndRegistry() public view {
        vm.assertEq(address(hook.core()), address(core), "core");
        vm.assertEq(address(hook.stakeRegistry()), address(registry), "registry");
        vm.assertEq(pool.hook(), address(hook), "the pool's hook");
        vm.assertEq(address(pool.core()), address(core), "the pool's core");
        vm.assertEq(registry.jobLocker(), address(hook), "the hook is the job locker");
        vm.assertTrue(hook.supportsInterface(type(IERC8183Hook).interfaceId), "IERC8183Hook");
        vm.assertTrue(hook.supportsInterface(type(IERC165).interfaceId), "IERC165");
        vm.assertFalse(hook.supportsInterface(0xffffffff), "not 0xffffffff");
    }

    function test_constructor_refusesARegistryThatIsNotItsLocker() public {
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotJobLocker.selector, address(registry)));
        new SuretyHook(core, registry);
    }

    function test_createAddress_predictsCreate() public {
        address want = createAddress(address(this), vm.getNonce(address(this)));
        vm.assertEq(address(new MockERC20("x", "x")), want, "CREATE address");
    }

    // --- callbacks ---

    function test_callbacks_onlyFromTheCore() public {
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotCore.selector, stranger));
        vm.prank(stranger);
        hook.beforeAction(1, IERC8183.fund.selector, "");
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotCore.selector, stranger));
        vm.prank(stranger);
        hook.afterAction(1, IERC8183.fund.selector, "");
    }

    function test_createJob_refusesAnotherProviderOrEvaluator() public {
        vm.startPrank(client);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotSuretyJob.selector, 1, worker, address(hook)));
        core.createJob(worker, address(hook), block.timestamp + DURATION, "job", address(hook), 0);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotSuretyJob.selector, 1, address(pool), arbiter));
        core.createJob(address(pool), arbiter, block.timestamp + DURATION, "job", address(hook), 0);
        vm.stopPrank();
        vm.assertEq(core.jobCounter(), 0, "nothing created");
    }

    // --- plans ---

    function test_setBudget_storesThePlan() public {
        uint256 id = created();
        ISuretyHook.Plan memory p = plan(1, 1, STAKE);
        vm.expectEmit(true, true, true, true, address(hook));
        emit Planned(id, client, 0, p);
        vm.prank(client);
        core.setBudget(id, address(token), BUDGET, abi.encode(p));
        assertPhase(id, ISuretyHook.Phase.Planned);
        vm.assertEq(hook.planOf(id).arbiter, arbiter, "arbiter");
        vm.assertEq(hook.jobOf(id).client, client, "client");
        // The client may change it until the job is funded.
        p.reviewWindow = 1 days;
        vm.prank(client);
        core.setBudget(id, address(token), BUDGET, abi.encode(p));
        vm.assertEq(uint256(hook.planOf(id).reviewWindow), 1 days, "replanned");
    }

    function test_setBudget_onlyFromTheClient() public {
        uint256 id = created();
        vm.expectRevert(IERC8183.Unauthorized.selector); // the core: neither client nor provider
        vm.prank(stranger);
        core.setBudget(id, address(token), BUDGET, abi.encode(plan(1, 1, 0)));
        // The provider is the pool, which never sets a budget; the hook refuses it all the same.
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotClient.selector, id, address(pool)));
        vm.prank(address(pool));
        core.setBudget(id, address(token), BUDGET, abi.encode(plan(1, 1, 0)));
    }

    function test_setBudget_frozenOnceFunded() public {
        uint256 id = funded(plan(1, 1, 0));
        vm.expectRevert(IERC8183.WrongStatus.selector);
        vm.prank(client);
        core.setBudget(id, address(token), BUDGET, abi.encode(plan(2, 2, 0)));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Open));
        vm.prank(address(core));
        hook.beforeAction(
            id, IERC8183.setBudget.selector, abi.encode(client, address(token), BUDGET, abi.encode(plan(2, 2, 0)))
        );
    }

    function _badPlan(ISuretyHook.Plan memory p, string memory field) internal {
        uint256 id = created();
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidPlan.selector, field));
        vm.prank(client);
        core.setBudget(id, address(token), BUDGET, abi.encode(p));
    }

    function test_setBudget_refusesWhatIsNotAPlan() public {
        uint256 id = created();
        vm.startPrank(client);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidPlan.selector, "encoding"));
        core.setBudget(id, address(token), BUDGET, "");
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidPlan.selector, "encoding"));
        core.setBudget(id, address(token), BUDGET, abi.encode(plan(1, 1, 0), uint256(1)));
        vm.stopPrank();
        assertPhase(id, ISuretyHook.Phase.None);
    }

    function test_setBudget_refusesInvalidPlans() public {
        ISuretyHook.Plan memory p = plan(1, 1, 0);
        p.arbiter = address(0);
        _badPlan(p, "arbiter");
        p.arbiter = client;
        _badPlan(p, "arbiter");
        p = plan(1, 1, 0);
        p.reviewWindow = 0;
        _badPlan(p, "reviewWindow");
        p.reviewWindow = hook.MAX_WINDOW() + 1;
        _badPlan(p, "reviewWindow");
        p = plan(1, 1, 0);
        p.arbiterTime = 0;
        _badPlan(p, "arbiterTime");
        p.arbiterTime = hook.MAX_WINDOW() + 1;
        _badPlan(p, "arbiterTime");
        _badPlan(plan(0, 0, 0), "maxEntries");
        _badPlan(plan(hook.MAX_ENTRIES() + 1, 1, 0), "maxEntries");
        _badPlan(plan(2, 0, 0), "maxWinners");
        _badPlan(plan(2, 3, 0), "maxWinners");
        p = plan(2, 1, 0);
        p.worker = worker;
        _badPlan(p, "worker"); // a named worker is a single-worker job
        p = plan(1, 1, 0);
        p.worker = client;
        _badPlan(p, "worker");
        p.worker = arbiter;
        _badPlan(p, "worker");
        p = plan(1, 1, 0);
        p.prevPart = 999; // not a job of this client
        _badPlan(p, "prevPart");
        p = plan(2, 1, 0);
        p.prevPart = funded(plan(1, 1, 0));
        _badPlan(p, "prevPart"); // a part is a single-worker job
        p = plan(1, 1, 0);
        p.prevPart = core.jobCounter() + 1; // itself
        _badPlan(p, "prevPart");
        p = plan(1, 1, 0);
        p.prevPart = funded(plan(2, 1, 0)); // the previous part is a competition: whose part is next?
        _badPlan(p, "prevPart");
    }

    function test_fund_refusesAPlanThatCannotFinishBeforeExpiry() public {
        vm.prank(client);
        uint256 id = core.createJob(address(pool), address(hook), block.timestamp + 9 days, "job", address(hook), 0);
        ISuretyHook.Plan memory p = plan(1, 1, 0); // 3 + 5 + 1 days: exactly 9, not before
        vm.prank(client);
        core.setBudget(id, address(token), BUDGET, abi.encode(p));
        uint256 finishBy = block.timestamp + REVIEW + ARBITER_TIME + hook.SETTLE_WINDOW();
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.TooLate.selector, id, finishBy, block.timestamp + 9 days));
        vm.prank(client);
        core.fund(id, BUDGET, "");
        p.arbiterTime = ARBITER_TIME - 1;
        vm.startPrank(client);
        core.setBudget(id, address(token), BUDGET, abi.encode(p));
        core.fund(id, BUDGET, "");
        vm.stopPrank();
        assertPhase(id, ISuretyHook.Phase.Open);
    }

    function test_fund_needsAPlanAndOpensTheJob() public {
        uint256 id = created();
        vm.startPrank(client);
        core.setBudget(id, address(token), BUDGET, abi.encode(plan(1, 1, 0)));
        vm.stopPrank();
        vm.expectEmit(true, true, false, true, address(hook));
        emit Opened(id, address(token), BUDGET, uint64(block.timestamp + DURATION));
        vm.prank(client);
        core.fund(id, BUDGET, "");
        assertPhase(id, ISuretyHook.Phase.Open);
        vm.assertEq(token.balanceOf(address(core)), BUDGET, "escrowed by the core");
    }

    function test_fund_refusedWithoutAPlan() public {
        // A job naming the hook whose budget the pool... nobody but the client can plan, so a
        // job the client funds without a plan is refused: it could never be worked.
        uint256 id = created();
        vm.prank(address(core));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.None));
        hook.beforeAction(id, IERC8183.fund.selector, abi.encode(client, bytes("")));
    }

    // --- join ---

    function test_join_locksTheStake() public {
        uint256 id = funded(plan(1, 1, STAKE));
        uint256 lockId = hook.lockIdOf(id, worker);
        vm.assertEq(lockId >> 255, 1, "a job lock id");
        vm.expectEmit(true, true, false, true, address(hook));
        emit Joined(id, worker, agentOf(worker), lockId);
        joinAs(id, worker);
        vm.assertEq(registry.freeStakeOf(agentOf(worker), worker), 10 ether - STAKE, "locked");
        vm.assertEq(registry.lockedAgent(lockId), agentOf(worker), "lock recorded");
        vm.assertEq(uint256(hook.entryOf(id, worker)), 1, "joined");
        vm.assertEq(hook.joinedOf(id).length, 1, "one entry");
    }

    function test_join_withoutStakeLocksAndReservesNothing() public {
        uint256 id = funded(plan(1, 1, 0));
        vm.expectEmit(true, true, false, true, address(hook));
        emit Joined(id, stranger, bytes32(0), 0);
        vm.prank(stranger);
        hook.join(id, bytes32(0));
        vm.assertEq(hook.entryOf(id, stranger), 0, "not recorded");
        vm.assertEq(hook.joinedOf(id).length, 0, "no slot taken");
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, id, client));
        vm.prank(client);
        hook.join(id, bytes32(0)); // the admission rules hold all the same
    }

    function test_submit_withoutStakeTheFirstSubmissionsTakeTheSlots() public {
        uint256 id = funded(plan(2, 1, 0));
        // Squatters join a job that costs nothing to join: they hold no slot.
        vm.prank(stranger);
        hook.join(id, bytes32(0));
        joinAs(id, worker3);
        submitAs(id, worker); // never joined: submitting enters
        submitAs(id, worker2);
        vm.assertEq(uint256(hook.jobOf(id).joined), 2, "two entries, both submitted");
        vm.assertEq(uint256(hook.jobOf(id).closedAt), block.timestamp, "every slot submitted");
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.JobFull.selector, id));
        vm.prank(stranger);
        hook.submit(id, RESULT);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.AlreadySubmitted.selector, id, worker));
        submitAs(id, worker);
        ISuretyHook.Plan memory named = plan(1, 1, 0);
        named.worker = worker2;
        uint256 other = funded(named);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, other, worker));
        submitAs(other, worker);
    }

    function test_join_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.UnknownJob.selector, 42));
        hook.join(42, agentOf(worker));
        uint256 id = planned(plan(1, 1, STAKE));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Planned));
        joinAs(id, worker);
        vm.prank(client);
        core.fund(id, BUDGET, "");
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, id, client));
        vm.prank(client);
        hook.join(id, agentOf(worker));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, id, arbiter));
        vm.prank(arbiter);
        hook.join(id, agentOf(worker));
        vm.expectRevert(
            abi.encodeWithSelector(
                IStakeRegistry.WrongStatus.selector, agentOf(worker2), worker, IStakeRegistry.Status.None
            )
        );
        vm.prank(worker);
        hook.join(id, agentOf(worker2)); // not its agent: not bound under this controller
        joinAs(id, worker);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.JobFull.selector, id));
        joinAs(id, worker2);
    }

    function test_join_needsEnoughFreeStake() public {
        uint256 id = funded(plan(1, 1, 11 ether));
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.InsufficientStake.selector, uint256(10 ether), uint256(11 ether))
        );
        joinAs(id, worker);
    }

    function test_join_twiceRefused() public {
        uint256 id = funded(plan(2, 1, STAKE));
        joinAs(id, worker);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.AlreadyJoined.selector, id, worker));
        joinAs(id, worker);
    }

    function test_join_namedWorkerOnly() public {
        ISuretyHook.Plan memory p = plan(1, 1, 0);
        p.worker = worker2;
        uint256 id = funded(p);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, id, worker));
        joinAs(id, worker);
        joinAs(id, worker2);
    }

    function test_join_tooLate() public {
        uint256 id = funded(plan(1, 1, 0));
        uint256 last = hook.lastSubmitOf(id);
        vm.assertEq(last, block.timestamp + DURATION - REVIEW - ARBITER_TIME - hook.SETTLE_WINDOW(), "last");
        vm.warp(last + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                ISuretyHook.TooLate.selector,
                id,
                block.timestamp + REVIEW + ARBITER_TIME + hook.SETTLE_WINDOW(),
                hook.jobOf(id).expiredAt
            )
        );
        joinAs(id, worker);
    }

    // --- submit ---

    function test_submit_submitsTheCoreJob() public {
        uint256 id = funded(plan(1, 1, STAKE));
        joinAs(id, worker);
        bytes32 d = keccak256(abi.encode(RESULT, worker));
        vm.expectEmit(true, true, false, true, address(hook));
        emit EntrySubmitted(id, worker, d);
        vm.expectEmit(true, true, false, true, address(core));
        emit IERC8183.JobSubmitted(id, address(pool), d);
        submitAs(id, worker);
        vm.assertEq(uint256(coreStatus(id)), uint256(IERC8183.JobStatus.Submitted), "core submitted");
        vm.assertEq(uint256(hook.jobOf(id).closedAt), block.timestamp, "entries closed");
        vm.assertEq(hook.reviewEndOf(id), block.timestamp + REVIEW, "review window");
    }

    function test_submit_reverts() public {
        uint256 id = funded(plan(1, 1, STAKE));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotEntrant.selector, id, worker));
        submitAs(id, worker);
        joinAs(id, worker);
        vm.warp(hook.lastSubmitOf(id) + 1);
        vm.expectRevert();
        submitAs(id, worker);
        vm.warp(hook.lastSubmitOf(id));
        submitAs(id, worker);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.AlreadySubmitted.selector, id, worker));
        submitAs(id, worker);
        vm.expectRevert(abi.encodeWithSelector(SuretyPool.NotHook.selector, worker));
        vm.prank(worker);
        pool.submit(id, RESULT);
    }

    // --- approve ---

    function test_approve_paysTheWorkerAndEndsTheLock() public {
        uint256 id = submitted();
        vm.expectEmit(true, true, false, true, address(hook));
        emit Awarded(id, worker, 10_000, net(BUDGET));
        vm.expectEmit(true, false, false, true, address(hook));
        emit Settled(id, ISuretyHook.Outcome.Approved, net(BUDGET), 0, 0);
        vm.prank(client);
        hook.approve(id);
        vm.assertEq(token.balanceOf(worker), net(BUDGET), "worker paid");
        vm.assertEq(token.balanceOf(treasury), BUDGET - net(BUDGET), "platform fee");
        vm.assertEq(token.balanceOf(address(pool)), 0, "the pool keeps nothing");
        vm.assertEq(token.balanceOf(address(core)), 0, "the core keeps nothing");
        vm.assertEq(registry.freeStakeOf(agentOf(worker), worker), 10 ether, "lock ended");
        vm.assertEq(uint256(coreStatus(id)), uint256(IERC8183.JobStatus.Completed), "core completed");
        assertPhase(id, ISuretyHook.Phase.Settled);
    }

    function test_approve_reverts() public {
        uint256 id = funded(plan(1, 1, 0));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NothingSubmitted.selector, id));
        vm.prank(client);
        hook.approve(id);
        joinAs(id, worker);
        submitAs(id, worker);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotClient.selector, id, stranger));
        vm.prank(stranger);
        hook.approve(id);
        uint256 end = hook.reviewEndOf(id);
        vm.warp(end + 1);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.ReviewWindowClosed.selector, id, end));
        vm.prank(client);
        hook.approve(id);
        uint256 comp = funded(plan(2, 1, 0));
        joinAs(comp, worker);
        submitAs(comp, worker);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, comp));
        vm.prank(client);
        hook.approve(comp); // competing jobs pick
    }

    function test_evaluatorFee_goesToTheArbiter() public {
        vm.prank(owner);
        core.setEvaluatorFee(50);
        uint256 id = submitted();
        vm.prank(client);
        hook.approve(id);
        uint256 evalFee = BUDGET * 50 / 10_000;
        vm.assertEq(token.balanceOf(arbiter), evalFee, "arbiter");
        vm.assertEq(token.balanceOf(worker), BUDGET - evalFee - BUDGET * PLATFORM_BP / 10_000, "worker");
        vm.assertEq(token.balanceOf(address(hook)), 0, "the hook keeps nothing");
    }

    // --- pay on silence ---

    function test_release_afterTheReviewWindowPaysTheWorker() public {
        uint256 id = submitted();
        uint256 end = hook.reviewEndOf(id);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.ReviewWindowOpen.selector, id, end));
        hook.release(id);
        vm.warp(end + 1);
        vm.prank(stranger); // anyone: it can only pay the worker
        hook.release(id);
        vm.assertEq(token.balanceOf(worker), net(BUDGET), "paid on silence");
        vm.assertEq(registry.freeStakeOf(agentOf(worker), worker), 10 ether, "no slash");
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Settled));
        hook.release(id);
    }

    function test_release_nothingSubmitted() public {
        uint256 id = funded(plan(1, 1, 0));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NothingSubmitted.selector, id));
        hook.release(id);
    }

    // --- disputes ---

    function test_reject_opensADispute() public {
        uint256 id = submitted();
        vm.expectEmit(true, true, false, true, address(hook));
        emit Disputed(id, client, keccak256("bad"));
        vm.prank(client);
        hook.reject(id, keccak256("bad"));
        assertPhase(id, ISuretyHook.Phase.Disputed);
        vm.assertEq(uint256(hook.jobOf(id).disputedAt), block.timestamp, "since");
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Disputed));
        vm.prank(client);
        hook.approve(id);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Disputed));
        hook.release(id);
    }

    function test_reject_reverts() public {
        uint256 id = submitted();
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotClient.selector, id, worker));
        vm.prank(worker);
        hook.reject(id, 0);
        vm.warp(hook.reviewEndOf(id) + 1);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.ReviewWindowClosed.selector, id, hook.reviewEndOf(id)));
        vm.prank(client);
        hook.reject(id, 0);
    }

    function test_resolve_splitsAndSlashes() public {
        uint256 id = disputed();
        uint256 clientBefore = token.balanceOf(client);
        uint256 clientEthBefore = client.balance;
        uint256 n = net(BUDGET);
        uint256 toWorker = n * 6_000 / 10_000;
        vm.expectEmit(true, false, false, true, address(hook));
        emit Settled(id, ISuretyHook.Outcome.Resolved, toWorker, n - toWorker, 0.4 ether);
        vm.prank(arbiter);
        hook.resolve(id, one(worker), bps1(6_000), 0.4 ether);
        vm.assertEq(token.balanceOf(worker), toWorker, "worker share");
        vm.assertEq(token.balanceOf(client) - clientBefore, n - toWorker, "client share");
        vm.assertEq(client.balance - clientEthBefore, 0.4 ether, "slash to the client");
        vm.assertEq(registry.stakeOf(agentOf(worker), worker), 10 ether - 0.4 ether, "slashed");
        vm.assertEq(registry.freeStakeOf(agentOf(worker), worker), 10 ether - 0.4 ether, "lock ended");
        vm.assertEq(token.balanceOf(address(pool)), 0, "pool empty");
    }

    function test_resolve_zeroRefundsTheClientThroughTheCore() public {
        uint256 id = disputed();
        uint256 before = token.balanceOf(client);
        vm.expectEmit(true, true, false, true, address(core));
        emit IERC8183.Refunded(id, client, BUDGET);
        vm.prank(arbiter);
        hook.resolve(id, new address[](0), new uint16[](0), STAKE);
        vm.assertEq(token.balanceOf(client) - before, BUDGET, "whole budget back, no fee");
        vm.assertEq(uint256(coreStatus(id)), uint256(IERC8183.JobStatus.Rejected), "core rejected");
        vm.assertEq(registry.stakeOf(agentOf(worker), worker), 10 ether - STAKE, "slashed the whole lock");
    }

    function test_resolve_reverts() public {
        uint256 id = submitted();
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Open));
        vm.prank(arbiter);
        hook.resolve(id, one(worker), bps1(5_000), 0);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.UnknownJob.selector, 77));
        hook.resolve(77, one(worker), bps1(5_000), 0);
        vm.prank(client);
        hook.reject(id, 0);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotArbiter.selector, id, client));
        vm.prank(client);
        hook.resolve(id, one(worker), bps1(5_000), 0);
        vm.startPrank(arbiter);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        hook.resolve(id, one(worker), bps1(10_001), 0);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        hook.resolve(id, one(worker), bps2(1, 2), 0); // lengths differ
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        hook.resolve(id, one(stranger), bps1(5_000), 0); // not an entrant
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        hook.resolve(id, one(worker), bps1(0), 0); // a winner with nothing
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        hook.resolve(id, two(worker, worker), bps2(1, 1), 0); // more than maxWinners
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSlash.selector, id, uint256(STAKE) + 1));
        hook.resolve(id, one(worker), bps1(5_000), uint256(STAKE) + 1);
        vm.stopPrank();
    }

    function test_resolveExpired_splitsEvenlyAfterTheArbitersTime() public {
        uint256 id = disputed();
        uint256 end = block.timestamp + ARBITER_TIME;
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.ArbiterTimeNotUp.selector, id, end));
        hook.resolveExpired(id);
        vm.warp(end + 1);
        uint256 before = token.balanceOf(client);
        vm.prank(stranger);
        hook.resolveExpired(id);
        uint256 n = net(BUDGET);
        vm.assertEq(token.balanceOf(worker), n / 2, "half to the worker");
        vm.assertEq(token.balanceOf(client) - before, n - n / 2, "half to the client");
        vm.assertEq(registry.stakeOf(agentOf(worker), worker), 10 ether, "no slash");
        vm.assertLe(end + 1, hook.jobOf(id).expiredAt - hook.SETTLE_WINDOW(), "settled before the core's expiry");
    }

    // --- cancel and expiry ---

    function test_cancel_beforeAnyoneJoins() public {
        uint256 id = funded(plan(1, 1, 0));
        uint256 before = token.balanceOf(client);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotClient.selector, id, stranger));
        vm.prank(stranger);
        hook.cancel(id);
        vm.prank(client);
        hook.cancel(id);
        vm.assertEq(token.balanceOf(client) - before, BUDGET, "refunded");
        vm.assertEq(uint256(coreStatus(id)), uint256(IERC8183.JobStatus.Rejected), "core rejected");
    }

    function test_cancel_notWhileWorkersCanStillSubmit() public {
        uint256 id = funded(plan(2, 1, STAKE));
        joinAs(id, worker);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.HasEntries.selector, id));
        vm.prank(client);
        hook.cancel(id);
        vm.warp(hook.lastSubmitOf(id) + 1);
        vm.prank(client);
        hook.cancel(id);
        vm.assertEq(registry.freeStakeOf(agentOf(worker), worker), 10 ether, "lock ended, unslashed");
    }

    function test_cancel_notAfterASubmission() public {
        uint256 id = submitted();
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Open));
        vm.prank(client);
        hook.cancel(id);
    }

    function test_close_endsTheLocksOfAnExpiredJob() public {
        uint256 id = funded(plan(2, 1, STAKE));
        joinAs(id, worker);
        joinAs(id, worker2);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.CoreStatus.selector, id, uint8(1)));
        hook.close(id);
        vm.warp(block.timestamp + DURATION);
        core.claimRefund(id); // the standard's recovery: nobody submitted
        vm.expectEmit(true, false, false, true, address(hook));
        emit Settled(id, ISuretyHook.Outcome.Expired, 0, 0, 0);
        hook.close(id);
        vm.assertEq(registry.freeStakeOf(agentOf(worker), worker), 10 ether, "worker free");
        vm.assertEq(registry.freeStakeOf(agentOf(worker2), worker2), 10 ether, "worker2 free");
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Settled));
        hook.close(id);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.UnknownJob.selector, 99));
        hook.close(99);
    }

    function test_close_afterTheClientRejectsAnUnfundedJob() public {
        uint256 id = planned(plan(1, 1, 0));
        vm.prank(client);
        core.reject(id, 0, "");
        hook.close(id);
        assertPhase(id, ISuretyHook.Phase.Settled);
    }

    // --- the pool ---

    function test_pool_creditsARecipientThatRefusesAndPaysItLater() public {
        BlockingToken bt = new BlockingToken();
        bt.mint(client, BUDGET);
        vm.prank(client);
        bt.approve(address(core), type(uint256).max);
        vm.prank(client);
        uint256 id = core.createJob(address(pool), address(hook), block.timestamp + DURATION, "j", address(hook), 0);
        vm.prank(client);
        core.setBudget(id, address(bt), BUDGET, abi.encode(plan(1, 1, 0)));
        vm.prank(client);
        core.fund(id, BUDGET, "");
        joinAs(id, worker);
        submitAs(id, worker);
        bt.setBlocked(worker, true);
        vm.prank(client);
        hook.approve(id);
        vm.assertEq(pool.owed(worker, address(bt)), net(BUDGET), "credited");
        vm.assertEq(pool.totalOwed(address(bt)), net(BUDGET), "total");
        vm.assertEq(bt.balanceOf(address(pool)), net(BUDGET), "the pool holds only credits");
        vm.prank(worker);
        vm.expectRevert(abi.encodeWithSelector(SuretyPool.TransferFailed.selector, address(bt), worker, net(BUDGET)));
        pool.withdraw(address(bt));
        bt.setBlocked(worker, false);
        vm.prank(worker);
        pool.withdraw(address(bt));
        vm.assertEq(bt.balanceOf(worker), net(BUDGET), "withdrawn");
        vm.assertEq(bt.balanceOf(address(pool)), 0, "empty");
        vm.assertEq(pool.totalOwed(address(bt)), 0, "no credits");
    }

    function test_pool_onlyTheHookPays() public {
        vm.expectRevert(abi.encodeWithSelector(SuretyPool.NotHook.selector, stranger));
        vm.prank(stranger);
        pool.pay(address(token), one(stranger), new uint256[](1));
        vm.expectRevert(abi.encodeWithSelector(SuretyPool.NothingToWithdraw.selector, stranger, address(token)));
        vm.prank(stranger);
        pool.withdraw(address(token));
    }

    // --- fee-on-transfer ---

    function test_feeOnTransfer_paysWhatArrived() public {
        FeeOnTransferToken fot = new FeeOnTransferToken(100);
        fot.mint(client, BUDGET);
        vm.prank(client);
        fot.approve(address(core), type(uint256).max);
        vm.prank(client);
        uint256 id = core.createJob(address(pool), address(hook), block.timestamp + DURATION, "j", address(hook), 0);
        vm.prank(client);
        core.setBudget(id, address(fot), BUDGET, abi.encode(plan(1, 1, 0)));
        vm.prank(client);
        core.fund(id, BUDGET, "");
        joinAs(id, worker);
        submitAs(id, worker);
        vm.prank(client);
        hook.approve(id);
        vm.assertEq(fot.balanceOf(address(pool)), 0, "the pool passed on what arrived");
        vm.assertGt(fot.balanceOf(worker), 0, "worker paid");
    }
}
