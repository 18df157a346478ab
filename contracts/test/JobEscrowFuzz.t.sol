// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {JobFixture} from "./lib/JobFixtures.sol";
import {IERC8183} from "../src/IERC8183.sol";
import {MockERC20, FeeOnTransferToken} from "./mocks/Tokens.sol";

contract JobEscrowFuzzTest is JobFixture {
    /// complete pays out exactly the budget: provider, treasury and evaluator together, with
    /// each fee rounded down as the reference rounds it.
    function testFuzz_complete_conservesTheBudget(uint256 amount, uint256 platformBP, uint256 evaluatorBP) public {
        amount = bound(amount, 0, type(uint256).max - token.totalSupply());
        platformBP = bound(platformBP, 0, 10_000);
        evaluatorBP = bound(evaluatorBP, 0, 10_000 - platformBP);
        vm.startPrank(owner);
        escrow.setPlatformFee(platformBP, treasury);
        escrow.setEvaluatorFee(evaluatorBP);
        vm.stopPrank();
        token.mint(client, amount);
        uint256 id = submitted(amount);
        vm.prank(evaluator);
        escrow.complete(id, REASON, "");
        // floor(amount × bp / 10,000), without the overflow of amount × bp.
        uint256 platformFee = amount / 10_000 * platformBP + amount % 10_000 * platformBP / 10_000;
        uint256 evaluatorFee = amount / 10_000 * evaluatorBP + amount % 10_000 * evaluatorBP / 10_000;
        if (amount <= type(uint256).max / 10_000) {
            vm.assertEq(platformFee, amount * platformBP / 10_000, "the reference's formula where it holds");
        }
        vm.assertEq(token.balanceOf(treasury), platformFee, "platform fee");
        vm.assertEq(token.balanceOf(evaluator), evaluatorFee, "evaluator fee");
        vm.assertEq(token.balanceOf(provider), amount - platformFee - evaluatorFee, "provider");
        vm.assertEq(token.balanceOf(address(escrow)), 0, "nothing left behind");
    }

    /// Any budget, up to 2^256 - 1, is stored, funded and refunded whole.
    function testFuzz_budget_anySizeRoundTrips(uint256 amount) public {
        MockERC20 big = new MockERC20("Big", "BIG");
        big.mint(client, amount);
        vm.prank(client);
        big.approve(address(escrow), type(uint256).max);
        uint256 id = open();
        vm.prank(client);
        escrow.setBudget(id, address(big), amount, "");
        vm.assertEq(escrow.getJob(id).budget, amount, "stored");
        vm.prank(client);
        escrow.fund(id, amount, "");
        vm.assertEq(big.balanceOf(address(escrow)), amount, "escrowed");
        vm.prank(evaluator);
        escrow.reject(id, REASON, "");
        vm.assertEq(big.balanceOf(client), amount, "refunded whole");
    }

    /// A description of any length and content reads back byte for byte.
    function testFuzz_description_roundTrips(bytes memory description) public {
        vm.prank(client);
        uint256 id = escrow.createJob(provider, evaluator, expiry(), string(description), address(0), 0);
        vm.assertEq(keccak256(bytes(escrow.getJob(id).description)), keccak256(description), "description");
        (bool ok, bytes memory flat) = address(escrow).staticcall(abi.encodeCall(IERC8183.jobs, (id)));
        vm.assertTrue(ok, "jobs");
        vm.assertEq(keccak256(abi.encodePacked(uint256(32), flat)), keccak256(abi.encode(escrow.getJob(id))), "jobs()");
    }

    /// The parties, agent id and expiry read back as created.
    function testFuzz_createJob_storesWhatItWasGiven(address p, address e, uint256 agentId, uint40 exp) public {
        vm.assume(e != address(0) && e != p);
        exp = uint40(bound(exp, block.timestamp + 5 minutes + 1, type(uint40).max));
        vm.prank(client);
        uint256 id = escrow.createJob(p, e, exp, "", address(0), agentId);
        IERC8183.Job memory j = escrow.getJob(id);
        vm.assertEq(j.client, client, "client");
        vm.assertEq(j.provider, p, "provider");
        vm.assertEq(j.evaluator, e, "evaluator");
        vm.assertEq(j.expiredAt, exp, "expiredAt");
        vm.assertEq(j.providerAgentId, p == address(0) ? 0 : agentId, "agent id");
    }

    /// claimRefund of a funded job works from expiredAt on and never before.
    function testFuzz_claimRefund_onlyFromExpiry(uint256 at) public {
        uint256 id = funded(BUDGET);
        uint256 exp = escrow.getJob(id).expiredAt;
        at = bound(at, block.timestamp, exp + 365 days);
        vm.warp(at);
        if (at < exp) vm.expectRevert(IERC8183.WrongStatus.selector);
        escrow.claimRefund(id);
        if (at >= exp) assertStatus(id, IERC8183.JobStatus.Expired, "expired");
    }

    /// A submitted job expires only once expiredAt has passed and the grace period after the
    /// submission has run out.
    function testFuzz_claimRefund_gracePeriod(uint256 submitAt, uint256 at) public {
        uint256 id = funded(BUDGET);
        uint256 exp = escrow.getJob(id).expiredAt;
        submitAt = bound(submitAt, block.timestamp, exp + 2 hours);
        vm.warp(submitAt);
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        at = bound(at, submitAt, exp + 4 hours);
        vm.warp(at);
        if (at < exp) {
            vm.expectRevert(IERC8183.WrongStatus.selector);
        } else if (at < submitAt + 1 hours) {
            vm.expectRevert(IERC8183.GracePeriodActive.selector);
        }
        escrow.claimRefund(id);
    }

    /// With a fee-on-transfer token, what the job pays out (complete) or refunds equals what
    /// arrived at fund, for any fee and amount.
    function testFuzz_feeOnTransfer_paysWhatArrived(uint256 amount, uint256 feeBps, bool completeIt) public {
        feeBps = bound(feeBps, 0, 9_999);
        amount = bound(amount, 10_000, 1e30);
        FeeOnTransferToken fot = new FeeOnTransferToken(feeBps);
        fot.mint(client, amount);
        vm.prank(client);
        fot.approve(address(escrow), amount);
        uint256 id = open();
        vm.prank(client);
        escrow.setBudget(id, address(fot), amount, "");
        vm.prank(client);
        escrow.fund(id, amount, "");
        uint256 arrived = fot.balanceOf(address(escrow));
        vm.assertEq(escrow.getJob(id).budget, arrived, "budget is what arrived");
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        vm.prank(evaluator);
        if (completeIt) escrow.complete(id, REASON, "");
        else escrow.reject(id, REASON, "");
        vm.assertEq(fot.balanceOf(address(escrow)), 0, "paid out exactly what it held");
    }
}
