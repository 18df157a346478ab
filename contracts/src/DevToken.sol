// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title DevToken
/// @notice A plain ERC-20 that anyone may mint, for dev chains (the embedded chain, Anvil) and
/// tests, so that ERC-20 bounties and stakes can be tried without a real token. `Deploy` never
/// deploys it; `DeployDevToken` does, on request. It has no value and must not be used on a
/// public chain.
contract DevToken {
    /// @notice The token's name.
    string public name;
    /// @notice The token's symbol.
    string public symbol;
    /// @notice 18, like ETH.
    uint8 public constant decimals = 18;
    /// @notice All tokens minted.
    uint256 public totalSupply;
    /// @notice Balances.
    mapping(address => uint256) public balanceOf;
    /// @notice Allowances.
    mapping(address => mapping(address => uint256)) public allowance;

    /// @notice The sender holds less than the amount.
    error InsufficientBalance(address account, uint256 balance, uint256 needed);
    /// @notice The spender may move less than the amount.
    error InsufficientAllowance(address owner, address spender, uint256 allowance, uint256 needed);

    /// @notice ERC-20 Transfer.
    event Transfer(address indexed from, address indexed to, uint256 amount);
    /// @notice ERC-20 Approval.
    event Approval(address indexed owner, address indexed spender, uint256 amount);

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
    }

    /// @notice Mints `amount` to `to`. Anyone may: this is a dev token.
    function mint(address to, uint256 amount) external {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    /// @notice ERC-20 approve.
    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    /// @notice ERC-20 transfer.
    function transfer(address to, uint256 amount) external returns (bool) {
        _move(msg.sender, to, amount);
        return true;
    }

    /// @notice ERC-20 transferFrom; an allowance of type(uint256).max never decreases.
    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed < amount) revert InsufficientAllowance(from, msg.sender, allowed, amount);
        if (allowed != type(uint256).max) allowance[from][msg.sender] = allowed - amount;
        _move(from, to, amount);
        return true;
    }

    function _move(address from, address to, uint256 amount) private {
        uint256 bal = balanceOf[from];
        if (bal < amount) revert InsufficientBalance(from, bal, amount);
        balanceOf[from] = bal - amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}
