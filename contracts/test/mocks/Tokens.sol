// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @notice A plain ERC-20 for tests, with open minting.
contract MockERC20 {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 amount);
    event Approval(address indexed owner, address indexed spender, uint256 amount);

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
    }

    function mint(address to, uint256 amount) external {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transfer(address to, uint256 amount) external virtual returns (bool) {
        _move(msg.sender, to, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external virtual returns (bool) {
        _spend(from, amount);
        _move(from, to, amount);
        return true;
    }

    function _spend(address from, uint256 amount) internal {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= amount, "allowance");
        if (allowed != type(uint256).max) allowance[from][msg.sender] = allowed - amount;
    }

    function _move(address from, address to, uint256 amount) internal virtual {
        require(balanceOf[from] >= amount, "balance");
        balanceOf[from] -= amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}

/// @notice Burns `feeBps` of every transfer, so the recipient gets less than was sent.
contract FeeOnTransferToken is MockERC20 {
    uint256 public immutable feeBps;

    constructor(uint256 feeBps_) MockERC20("Fee", "FEE") {
        feeBps = feeBps_;
    }

    function _move(address from, address to, uint256 amount) internal override {
        require(balanceOf[from] >= amount, "balance");
        uint256 fee = amount * feeBps / 10_000;
        balanceOf[from] -= amount;
        balanceOf[to] += amount - fee;
        totalSupply -= fee;
        emit Transfer(from, to, amount - fee);
    }
}

/// @notice Returns false instead of reverting, moving nothing, while `failing` is set.
contract FalseToken is MockERC20 {
    bool public failing = true;

    constructor() MockERC20("False", "FALSE") {}

    function setFailing(bool f) external {
        failing = f;
    }

    function transfer(address to, uint256 amount) external override returns (bool) {
        if (failing) return false;
        _move(msg.sender, to, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external override returns (bool) {
        if (failing) return false;
        _spend(from, amount);
        _move(from, to, amount);
        return true;
    }
}

/// @notice Like USDT: transfer and transferFrom return nothing.
contract NoReturnToken {
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
    }

    function approve(address spender, uint256 amount) external {
        allowance[msg.sender][spender] = amount;
    }

    function transfer(address to, uint256 amount) external {
        require(balanceOf[msg.sender] >= amount, "balance");
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
    }

    function transferFrom(address from, address to, uint256 amount) external {
        require(allowance[from][msg.sender] >= amount && balanceOf[from] >= amount, "denied");
        allowance[from][msg.sender] -= amount;
        balanceOf[from] -= amount;
        balanceOf[to] += amount;
    }
}

/// @notice Calls back into a target during transferFrom (as ERC-777 hooks do), replaying
/// `callbackData` once; records how the callback ended.
contract CallbackToken is MockERC20 {
    address public target;
    bytes public callbackData;
    bytes public callbackResult;
    bool public callbackOk;

    constructor() MockERC20("Hook", "HOOK") {}

    function arm(address target_, bytes calldata data) external {
        target = target_;
        callbackData = data;
    }

    function transferFrom(address from, address to, uint256 amount) external override returns (bool) {
        if (target != address(0)) {
            address t = target;
            target = address(0);
            (callbackOk, callbackResult) = t.call(callbackData);
        }
        _spend(from, amount);
        _move(from, to, amount);
        return true;
    }
}

/// @notice A token its admin can freeze (every transfer reverts) or whose transfers to one
/// blocked account revert: a pausable, blocklisting issuer's token.
contract FreezableToken is MockERC20 {
    address public immutable admin;
    bool public frozen;
    mapping(address => bool) public blocked;

    constructor() MockERC20("Freeze", "FRZ") {
        admin = msg.sender;
    }

    function freeze(bool f) external {
        require(msg.sender == admin, "admin");
        frozen = f;
    }

    function block_(address a, bool b) external {
        require(msg.sender == admin, "admin");
        blocked[a] = b;
    }

    function _move(address from, address to, uint256 amount) internal override {
        require(!frozen, "frozen");
        require(!blocked[to] && !blocked[from], "blocked");
        super._move(from, to, amount);
    }
}
