// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {JobFixture} from "./lib/JobFixtures.sol";
import {IERC8183} from "../src/IERC8183.sol";

/// @notice The ERC-8183 lifecycle's gas, createJob → setBudget → fund → submit → complete
/// with an ERC-20, in steady state: the flow of the reference's end-to-end test (its
/// description, 20 USDC, the provider sets the budget, no fees), after one job completed (the
/// job counter and the provider's balance are non-zero) and with another job funded and open
/// (the escrow's balance is non-zero). Each step runs with the escrow and the token cooled
/// (vm.cool), as a transaction of its own finds them, and is charged its intrinsic gas (21,000
/// and its calldata), so the sum approximates five receipts; it is before the refund a
/// transaction gets for clearing the client's allowance. contracts.TestJobLifecycleGas
/// measures the same flow from real receipts: that is the figure bench/RESULTS.md reports.
contract JobEscrowGasTest is JobFixture {
    /// What this test measured when it was written: it fails when the lifecycle grows.
    uint256 internal constant LIFECYCLE_BUDGET = 326_000;
    string internal constant REFERENCE_DESCRIPTION = "Generate a beautiful landscape wallpaper image";

    function setUp() public override {
        super.setUp();
        // One whole job, then one funded and left open: steady state.
        uint256 first = submitted(BUDGET);
        vm.prank(evaluator);
        escrow.complete(first, REASON, "");
        funded(1);
        vm.prank(client);
        token.approve(address(escrow), BUDGET); // the client approves the coming job's budget
    }

    function test_gas_lifecycleSteadyState() public {
        uint256 exp = block.timestamp + 1 hours;
        uint256 total;
        uint256 id = escrow.jobCounter() + 1;
        total += step(
            client, abi.encodeCall(IERC8183.createJob, (provider, evaluator, exp, REFERENCE_DESCRIPTION, address(0), 0))
        );
        total += step(provider, abi.encodeCall(IERC8183.setBudget, (id, address(token), BUDGET, "")));
        total += step(client, abi.encodeCall(IERC8183.fund, (id, BUDGET, "")));
        total += step(provider, abi.encodeCall(IERC8183.submit, (id, keccak256("wallpaper.jpg"), "")));
        total += step(evaluator, abi.encodeCall(IERC8183.complete, (id, bytes32("approved"), "")));
        assertStatus(id, IERC8183.JobStatus.Completed, "completed");
        vm.assertEq(token.balanceOf(provider), 2 * BUDGET, "paid twice over two jobs");
        vm.assertLe(total, LIFECYCLE_BUDGET, "lifecycle gas (intrinsic included, before refunds)");
    }

    /// Runs one call as its own transaction would: cold escrow and token, charged 21,000 and
    /// its calldata (16 gas a non-zero byte, 4 a zero byte).
    function step(address from, bytes memory data) internal returns (uint256 used) {
        vm.cool(address(escrow));
        vm.cool(address(token));
        vm.prank(from);
        uint256 before = gasleft();
        (bool ok,) = address(escrow).call(data);
        used = before - gasleft();
        vm.assertTrue(ok, "step");
        used += 21_000;
        for (uint256 i = 0; i < data.length; i++) {
            used += data[i] == 0 ? 4 : 16;
        }
    }
}
