// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title Owned
/// @notice An owner role handed over in two steps: the owner names a successor, and the role
/// moves only when that successor accepts, so a typo never hands it to an address nobody holds.
abstract contract Owned {
    /// @notice Only the owner may do this.
    error NotOwner(address caller);
    /// @notice Only the pending owner may accept the role.
    error NotPendingOwner(address caller);

    /// @notice The owner named `pendingOwner` as its successor; nothing moves until it accepts.
    event OwnershipTransferStarted(address indexed owner, address indexed pendingOwner);
    /// @notice The owner changed.
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    /// @notice Holds the role.
    address public owner;
    /// @notice Named by the owner; becomes owner when it calls acceptOwnership.
    address public pendingOwner;

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _;
    }

    constructor(address owner_) {
        owner = owner_;
        emit OwnershipTransferred(address(0), owner_);
    }

    /// @notice Names `next` as the successor (address(0) withdraws a pending offer).
    function transferOwnership(address next) external onlyOwner {
        pendingOwner = next;
        emit OwnershipTransferStarted(msg.sender, next);
    }

    /// @notice The pending owner takes the role.
    function acceptOwnership() external {
        if (msg.sender != pendingOwner) revert NotPendingOwner(msg.sender);
        emit OwnershipTransferred(owner, msg.sender);
        owner = msg.sender;
        pendingOwner = address(0);
    }
}
