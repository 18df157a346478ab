// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {EscrowFixture} from "./lib/Fixtures.sol";
import {IBountyEscrow} from "../src/IBountyEscrow.sol";
import {ReentrancyGuard} from "../src/ReentrancyGuard.sol";
import {ReentrantReceiver} from "./mocks/Receivers.sol";
import {FalseToken, FeeOnTransferToken, NoReturnToken, CallbackToken} from "./mocks/Tokens.sol";

/// @notice Attacks: re-entry through ETH receivers and token callbacks, tokens that return
/// false, fee-on-transfer tokens, tokens that return nothing.
contract BountyEscrowAttackTest is EscrowFixture {
    function _reentrySelector(ReentrantReceiver r) internal view returns (bytes4 sel) {
        bytes memory ret = r.reentryResult();
        // forge-lint: disable-next-line(unsafe-typecast) the first four bytes are the selector
        if (ret.length >= 4) sel = bytes4(ret);
    }

    function test_reentrantWorker_cannotBePaidTwice() public {
        ReentrantReceiver attacker = new ReentrantReceiver();
        (uint256 id, IBountyEscrow.Terms memory t) = postETH(5 ether);
        vm.prank(poster);
        escrow.assign(id, t, address(attacker));
        attacker.exec(address(escrow), 0, abi.encodeCall(escrow.submit, (id, t, address(attacker), RESULT)));
        // When paid, the attacker calls release on the same bounty, hoping to be paid again.
        attacker.arm(address(escrow), abi.encodeCall(escrow.release, (id, t, address(attacker))));
        vm.prank(poster);
        escrow.accept(id, t, address(attacker));

        vm.assertTrue(attacker.reentered(), "the attacker did try");
        vm.assertFalse(attacker.reentryOk(), "re-entry failed");
        vm.assertEq(
            uint256(uint32(_reentrySelector(attacker))),
            uint256(uint32(ReentrancyGuard.Reentrancy.selector)),
            "refused as Reentrancy"
        );
        vm.assertEq(attacker.received(), 5 ether - feeOf(5 ether), "paid exactly once");
        vm.assertEq(address(escrow).balance, feeOf(5 ether), "only the fee remains");
        assertStatus(id, IBountyEscrow.Status.Accepted);
    }

    function test_reentrantPoster_cannotDrainOnCancel() public {
        ReentrantReceiver attacker = new ReentrantReceiver();
        (uint256 other,) = postETH(10 ether); // someone else's funds sit in the escrow
        IBountyEscrow.Terms memory t = termsOf(address(attacker), address(0), 1 ether, 0);
        attacker.exec{value: 1 ether}(
            address(escrow),
            1 ether,
            abi.encodeCall(escrow.post, (address(0), 1 ether, arbiter, t.deadline, REVIEW, 0, SPEC, SALT))
        );
        vm.assertTrue(other != escrow.bountyId(address(attacker), SALT), "two bounties");
        uint256 id = escrow.bountyId(address(attacker), SALT);
        attacker.arm(address(escrow), abi.encodeCall(escrow.cancel, (id, t)));
        attacker.exec(address(escrow), 0, abi.encodeCall(escrow.cancel, (id, t)));
        vm.assertFalse(attacker.reentryOk(), "re-entry failed");
        vm.assertEq(attacker.received(), 1 ether, "refunded once");
        vm.assertEq(address(escrow).balance, 10 ether, "the other bounty's funds are untouched");
    }

    function test_reentrantWithdraw_paysOnce() public {
        ReentrantReceiver attacker = new ReentrantReceiver();
        // First the attacker gets a credit: a token refund whose push the token refuses.
        FalseToken ft = new FalseToken();
        ft.setFailing(false);
        ft.mint(address(attacker), 3 ether);
        attacker.exec(address(ft), 0, abi.encodeCall(ft.approve, (address(escrow), 3 ether)));
        IBountyEscrow.Terms memory t = termsOf(address(attacker), address(ft), 3 ether, 0);
        attacker.exec(
            address(escrow),
            0,
            abi.encodeCall(escrow.post, (address(ft), 3 ether, arbiter, t.deadline, REVIEW, 0, SPEC, SALT))
        );
        ft.setFailing(true);
        attacker.exec(address(escrow), 0, abi.encodeCall(escrow.cancel, (escrow.bountyId(address(attacker), SALT), t)));
        vm.assertEq(escrow.owed(address(attacker), address(ft)), 3 ether, "credited");
        ft.setFailing(false);
        // Then, while being paid ETH for another bounty, it tries to withdraw that credit.
        (uint256 id2, IBountyEscrow.Terms memory t2) = postETH(2 ether);
        vm.prank(poster);
        escrow.assign(id2, t2, address(attacker));
        attacker.arm(address(escrow), abi.encodeCall(escrow.withdraw, (address(ft))));
        attacker.exec(address(escrow), 0, abi.encodeCall(escrow.submit, (id2, t2, address(attacker), RESULT)));
        vm.prank(poster);
        escrow.accept(id2, t2, address(attacker)); // push → receive() → withdraw(ft): refused
        vm.assertFalse(attacker.reentryOk(), "withdraw during a settlement is refused");
        vm.assertEq(escrow.owed(address(attacker), address(ft)), 3 ether, "credit intact");
        attacker.exec(address(escrow), 0, abi.encodeCall(escrow.withdraw, (address(ft))));
        vm.assertEq(ft.balanceOf(address(attacker)), 3 ether, "withdrawn once");
        vm.assertEq(escrow.owed(address(attacker), address(ft)), 0, "credit cleared");
    }

    function test_callbackToken_cannotReenterPost() public {
        CallbackToken hook = new CallbackToken();
        hook.mint(poster, 10 ether);
        vm.prank(poster);
        hook.approve(address(escrow), type(uint256).max);
        uint64 deadline = uint64(block.timestamp) + DURATION;
        // During transferFrom, the token posts again: the nested post must fail.
        hook.arm(
            address(escrow),
            abi.encodeCall(escrow.post, (address(hook), 1 ether, arbiter, deadline, REVIEW, 0, SPEC, SALT))
        );
        vm.prank(poster);
        uint256 id = escrow.post(address(hook), 5 ether, arbiter, deadline, REVIEW, 0, SPEC, keccak256("outer"));
        vm.assertFalse(hook.callbackOk(), "nested post refused");
        vm.assertEq(bytes4(hook.callbackResult()), ReentrancyGuard.Reentrancy.selector, "as Reentrancy");
        vm.assertEq(id, escrow.bountyId(poster, keccak256("outer")), "the outer post's id");
        uint256 nested = escrow.bountyId(address(hook), SALT);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.UnknownBounty.selector, nested));
        escrow.bountyOf(nested); // no second bounty
        vm.assertEq(hook.balanceOf(address(escrow)), 5 ether, "escrow holds exactly the outer post");
    }

    function test_falseToken_postFailsCleanly() public {
        FalseToken ft = new FalseToken(); // returns false, moves nothing
        ft.mint(poster, 10 ether);
        vm.prank(poster);
        ft.approve(address(escrow), type(uint256).max);
        vm.expectRevert(
            abi.encodeWithSelector(
                IBountyEscrow.TransferFailed.selector, address(ft), address(escrow), uint256(1 ether)
            )
        );
        vm.prank(poster);
        escrow.post(address(ft), 1 ether, arbiter, uint64(block.timestamp) + DURATION, REVIEW, 0, SPEC, SALT);
        uint256 id = escrow.bountyId(poster, SALT);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.UnknownBounty.selector, id));
        escrow.bountyOf(id); // nothing posted
        vm.assertEq(ft.balanceOf(poster), 10 ether, "nothing moved");
    }

    function test_feeOnTransferToken_accountingHolds() public {
        FeeOnTransferToken fot = new FeeOnTransferToken(200); // 2% burned per transfer
        fot.mint(poster, 100 ether);
        vm.prank(poster);
        fot.approve(address(escrow), type(uint256).max);
        IBountyEscrow.Terms memory t = termsOf(poster, address(fot), 98 ether, 0);
        vm.prank(poster);
        uint256 id = escrow.post(address(fot), 100 ether, arbiter, t.deadline, REVIEW, 0, SPEC, nextSalt());
        vm.prank(worker);
        escrow.claim(id, t, AGENT);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
        vm.prank(poster);
        escrow.accept(id, t, worker);
        uint256 fee = feeOf(98 ether);
        vm.assertEq(fot.balanceOf(address(escrow)), fee, "escrow keeps exactly the fee");
        vm.assertEq(escrow.feesOwed(address(fot)), fee, "and owes it");
        vm.assertEq(
            fot.balanceOf(worker), (98 ether - fee) * 98 / 100, "worker got the payout less the token's own fee"
        );
    }

    function test_feeOnTransferToken_withNominalTermsIsRefused() public {
        FeeOnTransferToken fot = new FeeOnTransferToken(200);
        fot.mint(poster, 100 ether);
        vm.prank(poster);
        fot.approve(address(escrow), type(uint256).max);
        IBountyEscrow.Terms memory nominal = termsOf(poster, address(fot), 100 ether, 0);
        vm.prank(poster);
        uint256 id = escrow.post(address(fot), 100 ether, arbiter, nominal.deadline, REVIEW, 0, SPEC, nextSalt());
        // Claiming the sent amount instead of the received one does not match the commitment.
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.TermsMismatch.selector, id));
        vm.prank(poster);
        escrow.cancel(id, nominal);
    }

    function test_noReturnToken_works() public {
        NoReturnToken usdt = new NoReturnToken();
        usdt.mint(poster, 10 ether);
        vm.prank(poster);
        usdt.approve(address(escrow), 10 ether);
        IBountyEscrow.Terms memory t = termsOf(poster, address(usdt), 10 ether, 0);
        vm.prank(poster);
        uint256 id = escrow.post(address(usdt), 10 ether, arbiter, t.deadline, REVIEW, 0, SPEC, nextSalt());
        vm.prank(poster);
        escrow.cancel(id, t);
        vm.assertEq(usdt.balanceOf(poster), 10 ether, "refunded");
    }

    function test_forgedTerms_cannotWithdrawMore() public {
        (uint256 small,) = postETH(1 ether);
        postETH(50 ether); // a victim's bounty
        IBountyEscrow.Terms memory forged = termsOf(poster, address(0), 50 ether, 0);
        vm.expectRevert(abi.encodeWithSelector(IBountyEscrow.TermsMismatch.selector, small));
        vm.prank(poster);
        escrow.cancel(small, forged);
    }
}
