// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title ReentrancyGuard
/// @notice A re-entry lock in transient storage (EIP-1153): while a function marked
/// nonReentrant runs, no marked function of the same contract can be entered, directly or
/// through a callback. The lock costs no persistent storage and clears itself with the
/// transaction.
abstract contract ReentrancyGuard {
    /// @notice A call re-entered the contract.
    error Reentrancy();

    bool private transient _entered;

    modifier nonReentrant() {
        if (_entered) revert Reentrancy();
        _entered = true;
        _;
        _entered = false;
    }
}
