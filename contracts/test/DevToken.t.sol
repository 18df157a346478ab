// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test} from "./lib/Test.sol";
import {DevToken} from "../src/DevToken.sol";

contract DevTokenTest is Test {
    DevToken internal token;
    address internal alice = makeAddr("alice");
    address internal bob = makeAddr("bob");

    function setUp() public {
        token = new DevToken("Surety Dev", "SDEV");
    }

    function test_mint_transfer_approve() public {
        token.mint(alice, 10 ether);
        vm.assertEq(token.totalSupply(), 10 ether, "supply");
        vm.prank(alice);
        vm.assertTrue(token.transfer(bob, 3 ether), "transfer returns true");
        vm.assertEq(token.balanceOf(bob), 3 ether, "bob");
        vm.prank(alice);
        token.approve(bob, 2 ether);
        vm.prank(bob);
        vm.assertTrue(token.transferFrom(alice, bob, 2 ether), "transferFrom returns true");
        vm.assertEq(token.balanceOf(alice), 5 ether, "alice");
        vm.assertEq(token.allowance(alice, bob), 0, "allowance used");
    }

    function test_transfer_revertsBeyondBalance() public {
        token.mint(alice, 1);
        vm.expectRevert(abi.encodeWithSelector(DevToken.InsufficientBalance.selector, alice, uint256(1), uint256(2)));
        vm.prank(alice);
        bool ok = token.transfer(bob, 2);
        ok; // not reached: the call reverts
    }

    function test_transferFrom_revertsBeyondAllowance() public {
        token.mint(alice, 5);
        vm.prank(alice);
        token.approve(bob, 1);
        vm.expectRevert(
            abi.encodeWithSelector(DevToken.InsufficientAllowance.selector, alice, bob, uint256(1), uint256(2))
        );
        vm.prank(bob);
        bool ok = token.transferFrom(alice, bob, 2);
        ok; // not reached: the call reverts
    }

    function test_infiniteAllowanceStays() public {
        token.mint(alice, 5);
        vm.prank(alice);
        token.approve(bob, type(uint256).max);
        vm.prank(bob);
        vm.assertTrue(token.transferFrom(alice, bob, 5), "transferFrom returns true");
        vm.assertEq(token.allowance(alice, bob), type(uint256).max, "unchanged");
    }
}
