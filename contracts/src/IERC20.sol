// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @notice The part of ERC-20 the escrow, the registry and their Go clients use.
interface IERC20 {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function approve(address spender, uint256 amount) external returns (bool);
    function balanceOf(address account) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
}

/// @notice Moves ETH and ERC-20 tokens, treating a token call that reverts, returns false, or
/// hits an address without code as a failure. Tokens that return nothing (USDT) succeed.
library Transfers {
    /// @dev Sends `amount` of `token` (address(0): ETH) to `to` with at most `gasCap` gas for
    /// the call; returns false on failure.
    function send(address token, address to, uint256 amount, uint256 gasCap) internal returns (bool) {
        if (token == address(0)) {
            (bool sent,) = to.call{value: amount, gas: gasCap}("");
            return sent;
        }
        return _call(token, abi.encodeCall(IERC20.transfer, (to, amount)), gasCap);
    }

    /// @dev Pulls `amount` of `token` from `from` into this contract and returns what arrived
    /// (the balance delta, so fee-on-transfer tokens are accounted correctly); ok is false
    /// when the transfer failed.
    function pull(address token, address from, uint256 amount) internal returns (uint256 received, bool ok) {
        uint256 before = IERC20(token).balanceOf(address(this));
        if (!_call(token, abi.encodeCall(IERC20.transferFrom, (from, address(this), amount)), gasleft())) {
            return (0, false);
        }
        uint256 afterwards = IERC20(token).balanceOf(address(this));
        if (afterwards < before) return (0, false);
        return (afterwards - before, true);
    }

    function _call(address token, bytes memory data, uint256 gasCap) private returns (bool) {
        if (token.code.length == 0) return false;
        (bool ok, bytes memory ret) = token.call{gas: gasCap}(data);
        if (!ok) return false;
        if (ret.length == 0) return true;
        return ret.length >= 32 && abi.decode(ret, (uint256)) == 1;
    }
}
