// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title IERC165
/// @notice ERC-165: a contract says which interfaces it implements.
interface IERC165 {
    /// @notice True when the contract implements the interface `interfaceId` (the XOR of its
    /// function selectors); false for 0xffffffff.
    function supportsInterface(bytes4 interfaceId) external view returns (bool);
}
