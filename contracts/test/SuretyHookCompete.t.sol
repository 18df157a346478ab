// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {HookFixture} from "./lib/HookFixture.sol";
import {IERC8183} from "../src/IERC8183.sol";
import {ISuretyHook} from "../src/ISuretyHook.sol";

/// @notice SuretyHook: competing workers, milestones, and fuzzed splits.
contract SuretyHookCompeteTest is HookFixture {
    event Planned(uint256 indexed jobId, address indexed client, uint256 indexed prevPart, ISuretyHook.Plan plan);

    /// @dev A competing job (three entries, two winners, a stake) all three workers submitted to.
    function competed() internal returns (uint256 id) {
        id = funded(plan(3, 2, STAKE));
        joinAs(id, worker);
        joinAs(id, worker2);
        joinAs(id, worker3);
        submitAs(id, worker2);
        submitAs(id, worker);
        submitAs(id, worker3);
    }

    function test_compete_threeWorkersTwoShareTheBudget() public {
        uint256 id = competed();
        vm.assertEq(hook.submittersOf(id)[0], worker2, "submission order");
        vm.assertEq(uint256(hook.jobOf(id).closedAt), block.timestamp, "every slot submitted: entries closed");
        vm.prank(client);
        hook.pick(id, ISuretyHookLists.two(worker, worker3), ISuretyHookLists.bps2(7_000, 3_000));
        uint256 n = net(BUDGET);
        vm.assertEq(token.balanceOf(worker), n * 7_000 / 10_000, "first winner");
        vm.assertEq(token.balanceOf(worker3), n - n * 7_000 / 10_000, "second winner");
        vm.assertEq(token.balanceOf(worker2), 0, "the loser gets nothing");
        vm.assertEq(registry.freeStakeOf(agentOf(worker2), worker2), 10 ether, "and loses no stake");
        vm.assertEq(registry.freeStakeOf(agentOf(worker), worker), 10 ether, "winner unlocked");
        vm.assertEq(token.balanceOf(address(pool)), 0, "pool empty");
    }

    function test_pick_reverts() public {
        uint256 id = competed();
        vm.startPrank(client);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        hook.pick(id, ISuretyHookLists.two(worker, worker3), ISuretyHookLists.bps2(7_000, 2_000)); // not whole
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        hook.pick(id, ISuretyHookLists.three(worker, worker2, worker3), ISuretyHookLists.bps3(5_000, 2_500, 2_500));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        hook.pick(id, ISuretyHookLists.two(worker, worker), ISuretyHookLists.bps2(5_000, 5_000)); // duplicate
        vm.stopPrank();
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotClient.selector, id, arbiter));
        vm.prank(arbiter);
        hook.pick(id, one(worker), bps1(10_000));
    }

    function test_pick_onlySubmittersAndClosesTheEntries() public {
        uint256 id = funded(plan(3, 1, 0));
        joinAs(id, worker);
        joinAs(id, worker2);
        submitAs(id, worker);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        vm.prank(client);
        hook.pick(id, one(worker2), bps1(10_000)); // joined, not submitted
        vm.prank(client);
        hook.pick(id, one(worker), bps1(10_000)); // the client need not wait for the others
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Settled));
        submitAs(id, worker2);
    }

    function test_compete_silencePaysTheFirstSubmittersEvenly() public {
        uint256 id = competed();
        vm.warp(hook.reviewEndOf(id) + 1);
        hook.release(id);
        uint256 n = net(BUDGET);
        // maxWinners 2: the first two submitters (worker2, then worker) share it.
        vm.assertEq(token.balanceOf(worker2) + token.balanceOf(worker), n, "all of it to workers");
        vm.assertEq(token.balanceOf(worker), n / 2, "even");
        vm.assertEq(token.balanceOf(worker3), 0, "the third submitter gets nothing");
        vm.assertEq(registry.freeStakeOf(agentOf(worker3), worker3), 10 ether, "nor loses stake");
    }

    function test_compete_reviewWindowStartsAtTheLastSubmitTimeWhenSlotsStayFree() public {
        uint256 id = funded(plan(3, 2, 0));
        joinAs(id, worker);
        submitAs(id, worker);
        vm.assertEq(hook.reviewEndOf(id), hook.lastSubmitOf(id) + REVIEW, "from the last submit time");
        vm.warp(hook.lastSubmitOf(id) + 1);
        vm.prank(client);
        hook.pick(id, one(worker), bps1(10_000)); // still within review
    }

    function test_compete_rejectAllGoesToTheArbiterWhoMayPickOrRefund() public {
        uint256 id = competed();
        vm.prank(client);
        hook.reject(id, keccak256("all bad"));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSlash.selector, id, uint256(1)));
        vm.prank(arbiter);
        hook.resolve(id, one(worker), bps1(5_000), 1); // losers lose no stake: no slash when competing
        uint256 before = token.balanceOf(client);
        vm.prank(arbiter);
        hook.resolve(id, ISuretyHookLists.two(worker, worker2), ISuretyHookLists.bps2(3_000, 2_000), 0);
        uint256 n = net(BUDGET);
        uint256 toWorkers = n * 5_000 / 10_000;
        vm.assertEq(token.balanceOf(worker), toWorkers * 3_000 / 5_000, "3/10");
        vm.assertEq(token.balanceOf(worker2), toWorkers - toWorkers * 3_000 / 5_000, "2/10");
        vm.assertEq(token.balanceOf(client) - before, n - toWorkers, "the rest to the client");
    }

    function test_compete_arbiterSilenceHalvesBetweenClientAndFirstSubmitters() public {
        uint256 id = competed();
        vm.prank(client);
        hook.reject(id, 0);
        vm.warp(block.timestamp + ARBITER_TIME + 1);
        uint256 before = token.balanceOf(client);
        hook.resolveExpired(id);
        uint256 n = net(BUDGET);
        vm.assertEq(token.balanceOf(client) - before, n - n / 2, "half to the client");
        vm.assertEq(token.balanceOf(worker2) + token.balanceOf(worker), n / 2, "half to the first two");
        vm.assertEq(token.balanceOf(worker3), 0, "third: nothing");
    }

    /// The client's own address can never win its job: it may not enter, and a pick names only
    /// submitters. (A second wallet of the client can: docs/ERC8183.md, "Competing workers".)
    function test_compete_clientCannotEnterNorBePicked() public {
        uint256 id = funded(plan(3, 2, 0));
        submitAs(id, worker);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, id, client));
        vm.prank(client);
        hook.join(id, bytes32(0));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, id, client));
        vm.prank(client);
        hook.submit(id, bytes32(0));
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        vm.prank(client);
        hook.pick(id, two(worker, client), bps2(5_000, 5_000));
        vm.prank(client);
        hook.reject(id, 0);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidSplit.selector, id));
        vm.prank(arbiter);
        hook.resolve(id, one(client), bps1(5_000), 0);
    }

    // --- milestones ---

    function part(uint256 prev, address named) internal returns (uint256 id) {
        ISuretyHook.Plan memory p = plan(1, 1, STAKE);
        p.prevPart = prev;
        p.worker = named;
        id = funded(p);
    }

    function test_milestones_threePartsEachPaidOnApproval() public {
        uint256 a = part(0, address(0));
        uint256 b = part(a, address(0));
        uint256 c = part(b, address(0));
        vm.assertEq(hook.planOf(c).prevPart, b, "linked");
        uint256 n = net(BUDGET);
        uint256[3] memory ids = [a, b, c];
        for (uint256 i; i < 3; ++i) {
            // Only the previous part's paid worker may take the next.
            if (i > 0) {
                vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, ids[i], worker2));
                joinAs(ids[i], worker2);
            }
            joinAs(ids[i], worker);
            submitAs(ids[i], worker);
            vm.prank(client);
            hook.approve(ids[i]);
            vm.assertEq(token.balanceOf(worker), n * (i + 1), "each part paid on its approval");
            vm.assertEq(uint256(coreStatus(ids[i])), uint256(IERC8183.JobStatus.Completed), "a standard job");
        }
        vm.assertEq(registry.freeStakeOf(agentOf(worker), worker), 10 ether, "every lock ended");
    }

    /// The next part is the paid worker's: not before its part is paid, and never for a worker
    /// that joined the previous part and did not submit.
    function test_milestones_nextPartWaitsForThePreviousPartsPayment() public {
        uint256 a = part(0, address(0));
        uint256 b = part(a, address(0));
        joinAs(a, worker);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, b, worker));
        joinAs(b, worker); // joined part one, not paid for it (not even submitted)
        submitAs(a, worker);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, b, worker));
        joinAs(b, worker); // submitted, not paid yet
        vm.prank(client);
        hook.approve(a);
        joinAs(b, worker);
    }

    /// A worker whose part was ruled against (nothing to it, its stake slashed) does not carry
    /// the milestone on; nor does one whose part was refunded at expiry.
    function test_milestones_aSlashedOrUnpaidWorkerMayNotJoinTheNextPart() public {
        uint256 a = part(0, address(0));
        uint256 b = part(a, address(0));
        joinAs(a, worker);
        submitAs(a, worker);
        vm.prank(client);
        hook.reject(a, 0);
        vm.prank(arbiter);
        hook.resolve(a, one(worker), bps1(5_000), STAKE); // half paid, but slashed
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, b, worker));
        joinAs(b, worker);

        uint256 c = part(0, address(0));
        uint256 d = part(c, address(0));
        joinAs(c, worker2);
        vm.warp(block.timestamp + DURATION);
        core.claimRefund(c);
        hook.close(c);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotAllowed.selector, d, worker2));
        joinAs(d, worker2);
    }

    function test_milestones_aPartDisputedAloneLeavesTheOthers() public {
        uint256 a = part(0, worker);
        uint256 b = part(a, address(0));
        joinAs(a, worker);
        submitAs(a, worker);
        vm.prank(client);
        hook.approve(a);
        joinAs(b, worker);
        submitAs(b, worker);
        vm.prank(client);
        hook.reject(b, 0);
        vm.prank(arbiter);
        hook.resolve(b, new address[](0), new uint16[](0), 0);
        vm.assertEq(token.balanceOf(worker), net(BUDGET), "part one stays paid");
        vm.assertEq(uint256(coreStatus(b)), uint256(IERC8183.JobStatus.Rejected), "part two refunded");
    }

    function test_milestones_onlyTheSameClientLinks() public {
        uint256 a = part(0, address(0));
        token.mint(stranger, BUDGET);
        vm.prank(stranger);
        uint256 id = core.createJob(address(pool), address(hook), block.timestamp + DURATION, "j", address(hook), 0);
        ISuretyHook.Plan memory p = plan(1, 1, 0);
        p.prevPart = a;
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.InvalidPlan.selector, "prevPart"));
        vm.prank(stranger);
        core.setBudget(id, address(token), BUDGET, abi.encode(p));
    }

    // --- fuzz ---

    function testFuzz_resolve_conservesTheBudget(uint16 a, uint16 b, uint96 budget) public {
        a = uint16(bound(a, 1, 9_999));
        b = uint16(bound(b, 1, 10_000 - a));
        uint256 amount = bound(budget, 1, 1e30);
        ISuretyHook.Plan memory p = plan(3, 2, 0);
        vm.prank(client);
        uint256 id = core.createJob(address(pool), address(hook), block.timestamp + DURATION, "j", address(hook), 0);
        vm.prank(client);
        core.setBudget(id, address(token), amount, abi.encode(p));
        token.mint(client, amount);
        vm.prank(client);
        core.fund(id, amount, "");
        joinAs(id, worker);
        joinAs(id, worker2);
        submitAs(id, worker);
        submitAs(id, worker2);
        vm.prank(client);
        hook.reject(id, 0);
        uint256 clientBefore = token.balanceOf(client);
        vm.prank(arbiter);
        hook.resolve(id, ISuretyHookLists.two(worker, worker2), ISuretyHookLists.bps2(a, b), 0);
        uint256 paid = token.balanceOf(worker) + token.balanceOf(worker2) + token.balanceOf(client) - clientBefore;
        vm.assertEq(paid + token.balanceOf(treasury), amount, "everything accounted, to the wei");
        vm.assertLe(token.balanceOf(worker) + token.balanceOf(worker2), amount * (uint256(a) + b) / 10_000, "shares");
        vm.assertEq(token.balanceOf(address(pool)), 0, "pool empty");
    }

    function testFuzz_submit_onlyWhileTheJobCanFinish(uint256 t) public {
        uint256 id = funded(plan(1, 1, 0));
        joinAs(id, worker);
        t = bound(t, block.timestamp, block.timestamp + DURATION);
        vm.warp(t);
        bool ok = t <= hook.lastSubmitOf(id);
        if (!ok) vm.expectRevert();
        submitAs(id, worker);
        if (ok) {
            vm.assertLe(hook.reviewEndOf(id) + ARBITER_TIME + hook.SETTLE_WINDOW(), hook.jobOf(id).expiredAt, "fits");
        }
    }
}

/// @dev Array literals for the tests.
library ISuretyHookLists {
    function two(address a, address b) internal pure returns (address[] memory w) {
        w = new address[](2);
        w[0] = a;
        w[1] = b;
    }

    function three(address a, address b, address c) internal pure returns (address[] memory w) {
        w = new address[](3);
        w[0] = a;
        w[1] = b;
        w[2] = c;
    }

    function bps2(uint16 a, uint16 b) internal pure returns (uint16[] memory x) {
        x = new uint16[](2);
        x[0] = a;
        x[1] = b;
    }

    function bps3(uint16 a, uint16 b, uint16 c) internal pure returns (uint16[] memory x) {
        x = new uint16[](3);
        x[0] = a;
        x[1] = b;
        x[2] = c;
    }
}
