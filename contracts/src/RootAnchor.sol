// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title RootAnchor
/// @notice Records the tree heads of each node's append-only audit log, so an auditor can check a
/// reputation proof against a root the node can no longer rewrite. A node may only move its log
/// forward: every anchor names a strictly larger tree size than the one before.
contract RootAnchor {
    /// @notice The tree size is not larger than the node's latest anchored size.
    error StaleTreeSize(uint64 latest, uint64 given);

    /// @notice A node anchored the root of its log at a tree size.
    event Anchored(address indexed node, uint64 indexed treeSize, bytes32 root);

    /// @notice The latest anchored tree size per node.
    mapping(address node => uint64 treeSize) public latestSize;

    /// @notice The anchored root per node and tree size (zero when never anchored).
    mapping(address node => mapping(uint64 treeSize => bytes32 root)) public rootAt;

    /// @notice Anchors `root` as the head of the caller's log at `treeSize`.
    function anchor(uint64 treeSize, bytes32 root) external {
        uint64 latest = latestSize[msg.sender];
        if (treeSize <= latest) revert StaleTreeSize(latest, treeSize);
        latestSize[msg.sender] = treeSize;
        rootAt[msg.sender][treeSize] = root;
        emit Anchored(msg.sender, treeSize, root);
    }
}
