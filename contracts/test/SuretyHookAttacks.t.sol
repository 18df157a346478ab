// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {HookFixture} from "./lib/HookFixture.sol";
import {IERC8183} from "../src/IERC8183.sol";
import {ISuretyHook} from "../src/ISuretyHook.sol";
import {ReentrancyGuard} from "../src/ReentrancyGuard.sol";
import {MockERC20} from "./mocks/Tokens.sol";

/// @notice A token that, on a transfer to `victim`, calls `target` with `data` once and
/// records how that call ended (the transfer itself goes through).
contract ReenteringToken is MockERC20 {
    address public victim;
    address public target;
    bytes public data;
    bool public called;
    bool public succeeded;
    bytes public reason;

    constructor() MockERC20("Re", "RE") {}

    function arm(address victim_, address target_, bytes calldata data_) external {
        victim = victim_;
        target = target_;
        data = data_;
    }

    function transfer(address to, uint256 amount) external override returns (bool) {
        _move(msg.sender, to, amount);
        if (to == victim && !called) {
            called = true;
            (succeeded, reason) = target.call(data);
        }
        return true;
    }
}

/// @notice SuretyHook under attack: re-entry through the payout token, a worker claiming
/// twice, a client trying to take its money back around the dispute, strangers.
contract SuretyHookAttackTest is HookFixture {
    ReenteringToken internal rt;

    function _rtJob(ISuretyHook.Plan memory p) internal returns (uint256 id) {
        rt = new ReenteringToken();
        rt.mint(client, BUDGET);
        vm.startPrank(client);
        rt.approve(address(core), type(uint256).max);
        id = core.createJob(address(pool), address(hook), block.timestamp + DURATION, "j", address(hook), 0);
        core.setBudget(id, address(rt), BUDGET, abi.encode(p));
        core.fund(id, BUDGET, "");
        vm.stopPrank();
    }

    function test_reentry_throughThePayoutCannotPayTwice() public {
        uint256 id = _rtJob(plan(2, 2, 0));
        joinAs(id, worker);
        joinAs(id, worker2);
        submitAs(id, worker);
        submitAs(id, worker2);
        // When the pool pays the worker, the token calls back into the hook to settle again.
        rt.arm(worker, address(hook), abi.encodeCall(hook.release, (id)));
        vm.prank(client);
        hook.pick(id, two(worker, worker2), bps2(5_000, 5_000));
        vm.assertTrue(rt.called(), "the token called back");
        vm.assertFalse(rt.succeeded(), "the re-entry failed");
        vm.assertEq(bytes32(rt.reason()), bytes32(ReentrancyGuard.Reentrancy.selector), "Reentrancy");
        vm.assertEq(rt.balanceOf(worker) + rt.balanceOf(worker2), net(BUDGET), "paid once");
        vm.assertEq(rt.balanceOf(address(pool)), 0, "pool empty");
    }

    function test_reentry_intoTheCoreDuringThePayoutIsRefused() public {
        uint256 id = _rtJob(plan(1, 1, 0));
        joinAs(id, worker);
        submitAs(id, worker);
        // From the worker's payout the token tries the core's reject (the evaluator's call):
        // the job is Completed already, and the token is not the evaluator anyway.
        rt.arm(worker, address(core), abi.encodeCall(core.reject, (id, bytes32(0), bytes(""))));
        vm.prank(client);
        hook.approve(id);
        vm.assertFalse(rt.succeeded(), "refused");
        vm.assertEq(uint256(coreStatus(id)), uint256(IERC8183.JobStatus.Completed), "completed once");
        vm.assertEq(rt.balanceOf(worker), net(BUDGET), "paid once");
    }

    function test_attack_clientCannotSettleAroundTheHook() public {
        uint256 id = submitted();
        // The client is not the evaluator: it cannot reject or complete the core job itself,
        // so the review window, the dispute and the stake lock hold.
        vm.startPrank(client);
        vm.expectRevert(IERC8183.Unauthorized.selector);
        core.reject(id, 0, "");
        vm.expectRevert(IERC8183.Unauthorized.selector);
        core.complete(id, 0, "");
        vm.stopPrank();
        // Nor can it cancel a submitted job, or rule on its own dispute.
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.WrongPhase.selector, id, ISuretyHook.Phase.Open));
        vm.prank(client);
        hook.cancel(id);
        vm.prank(client);
        hook.reject(id, 0);
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotArbiter.selector, id, client));
        vm.prank(client);
        hook.resolve(id, new address[](0), new uint16[](0), STAKE);
    }

    function test_attack_workerCannotSubmitTheCoreJobItself() public {
        uint256 id = funded(plan(1, 1, 0));
        joinAs(id, worker);
        vm.expectRevert(IERC8183.Unauthorized.selector); // the provider is the pool
        vm.prank(worker);
        core.submit(id, RESULT, "");
    }

    function test_attack_strangersCannotRuleOrPick() public {
        uint256 id = disputed();
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotArbiter.selector, id, worker));
        vm.prank(worker);
        hook.resolve(id, one(worker), bps1(10_000), 0);
        uint256 other = submitted2();
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotClient.selector, other, worker2));
        vm.prank(worker2);
        hook.pick(other, one(worker2), bps1(10_000));
    }

    function submitted2() internal returns (uint256 id) {
        id = funded(plan(2, 1, 0));
        joinAs(id, worker2);
        submitAs(id, worker2);
    }

    function test_attack_anotherHooksJobCannotDriveThisHook() public {
        // A job on the core without this hook never reaches it; a direct call is not the core.
        vm.expectRevert(abi.encodeWithSelector(ISuretyHook.NotCore.selector, client));
        vm.prank(client);
        hook.afterAction(1, IERC8183.fund.selector, abi.encode(client, bytes("")));
    }
}
