// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IERC165} from "./IERC165.sol";

/// @title IERC8183Hook
/// @notice ERC-8183's optional per-job hook: the job escrow calls it before and after its
/// hookable functions (setBudget, fund, submit, complete, reject: before and after; createJob:
/// after only; setProvider and claimRefund: never). `selector` is the escrow function's
/// selector; `data` is that function's arguments, abi-encoded as the ERC's table says:
///
///   createJob  abi.encode(address client, address provider, address evaluator)
///   setBudget  abi.encode(address caller, address token, uint256 amount, bytes optParams)
///   fund       abi.encode(address caller, bytes optParams)
///   submit     abi.encode(address caller, bytes32 deliverable, bytes optParams)
///   complete   abi.encode(address caller, bytes32 reason, bytes optParams)
///   reject     abi.encode(address caller, bytes32 reason, bytes optParams)
///
/// A hook must answer supportsInterface(type(IERC8183Hook).interfaceId) with true: the escrow
/// checks it (ERC-165) when a job names the hook. Its interface id is the XOR of the two
/// selectors below, so it is the same as the reference implementation's.
interface IERC8183Hook is IERC165 {
    /// @notice Called before the escrow's state changes; reverting blocks the action.
    function beforeAction(uint256 jobId, bytes4 selector, bytes calldata data) external;

    /// @notice Called after the escrow's state changed and its tokens moved; reverting rolls
    /// the whole action back.
    function afterAction(uint256 jobId, bytes4 selector, bytes calldata data) external;
}
