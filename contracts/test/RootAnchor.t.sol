// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test} from "./lib/Test.sol";
import {RootAnchor} from "../src/RootAnchor.sol";

contract RootAnchorTest is Test {
    event Anchored(address indexed node, uint64 indexed treeSize, bytes32 root);

    RootAnchor internal anchors;
    address internal node = makeAddr("node");
    address internal other = makeAddr("other");

    function setUp() public {
        anchors = new RootAnchor();
    }

    function test_anchor_recordsRootAndEmits() public {
        vm.expectEmit(true, true, false, true, address(anchors));
        emit Anchored(node, 3, bytes32(uint256(0xabc)));
        vm.prank(node);
        anchors.anchor(3, bytes32(uint256(0xabc)));

        vm.assertEq(uint256(anchors.latestSize(node)), 3, "latest size");
        vm.assertEq(anchors.rootAt(node, 3), bytes32(uint256(0xabc)), "root at 3");
        vm.assertEq(uint256(anchors.latestSize(other)), 0, "other node untouched");
    }

    function test_anchor_revertsWhenSizeDoesNotGrow() public {
        vm.prank(node);
        anchors.anchor(5, bytes32(uint256(1)));

        vm.expectRevert(abi.encodeWithSelector(RootAnchor.StaleTreeSize.selector, uint64(5), uint64(5)));
        vm.prank(node);
        anchors.anchor(5, bytes32(uint256(2)));

        vm.expectRevert(abi.encodeWithSelector(RootAnchor.StaleTreeSize.selector, uint64(5), uint64(4)));
        vm.prank(node);
        anchors.anchor(4, bytes32(uint256(2)));
    }

    function test_anchor_revertsOnZeroSize() public {
        vm.expectRevert(abi.encodeWithSelector(RootAnchor.StaleTreeSize.selector, uint64(0), uint64(0)));
        vm.prank(node);
        anchors.anchor(0, bytes32(uint256(1)));
    }

    function testFuzz_anchor_onlyMovesForward(uint64 first, uint64 second, bytes32 root) public {
        first = uint64(bound(first, 1, type(uint64).max - 1));
        vm.prank(node);
        anchors.anchor(first, root);

        vm.prank(node);
        if (second <= first) {
            vm.expectRevert(abi.encodeWithSelector(RootAnchor.StaleTreeSize.selector, first, second));
            anchors.anchor(second, root);
            vm.assertEq(uint256(anchors.latestSize(node)), first, "size unchanged after revert");
        } else {
            anchors.anchor(second, root);
            vm.assertEq(uint256(anchors.latestSize(node)), second, "size moved forward");
            vm.assertEq(anchors.rootAt(node, first), root, "earlier root kept");
        }
    }
}
