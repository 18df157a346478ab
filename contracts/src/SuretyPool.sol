// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IERC8183} from "./IERC8183.sol";
import {Transfers} from "./IERC20.sol";
import {ReentrancyGuard} from "./ReentrancyGuard.sol";

/// @title SuretyPool
/// @notice The provider of record of every Surety ERC-8183 job (ERC-8183 forbids a job's
/// provider to be its evaluator, and SuretyHook is the evaluator). The hook that created it
/// is the only account that moves it: it submits core jobs for the workers who entered them
/// and pays out what the core's `complete` paid the pool, in the same transaction. The pool
/// holds nothing between transactions but credits: a payout a recipient refuses (a token that
/// reverts for it, or spends more than PUSH_GAS) is credited and withdrawn later.
contract SuretyPool is ReentrancyGuard {
    using Transfers for address;

    /// @notice The most gas a pushed payment gives its recipient's token call.
    uint256 public constant PUSH_GAS = 100_000;

    /// @notice The hook that created this pool: the only account that may move it.
    address public immutable hook;
    /// @notice The ERC-8183 job escrow the pool is the provider on.
    IERC8183 public immutable core;
    /// @notice Payouts a recipient refused, per token, waiting for withdraw.
    mapping(address account => mapping(address token => uint256)) public owed;
    /// @notice The sum of `owed` per token: what the pool holds between transactions.
    mapping(address token => uint256) public totalOwed;

    /// @notice The caller is not the hook.
    error NotHook(address caller);
    /// @notice The caller is owed nothing in this token.
    error NothingToWithdraw(address account, address token);
    /// @notice A transfer failed.
    error TransferFailed(address token, address to, uint256 amount);

    /// @notice A payout could not be pushed to `account`, so it was credited.
    event Credited(address indexed account, address indexed token, uint256 amount);
    /// @notice An account withdrew what it was credited.
    event Withdrawn(address indexed account, address indexed token, uint256 amount);

    modifier onlyHook() {
        if (msg.sender != hook) revert NotHook(msg.sender);
        _;
    }

    constructor(IERC8183 core_) {
        hook = msg.sender;
        core = core_;
    }

    /// @notice Submits core job `jobId` as its provider (the hook checked the worker's entry).
    function submit(uint256 jobId, bytes32 deliverable) external onlyHook {
        core.submit(jobId, deliverable, "");
    }

    /// @notice Pays `amounts[i]` of `token` to `to[i]`, pushing each and crediting it when the
    /// push fails.
    function pay(address token, address[] calldata to, uint256[] calldata amounts) external onlyHook {
        for (uint256 i; i < to.length; ++i) {
            uint256 amount = amounts[i];
            if (amount == 0) continue;
            if (!token.send(to[i], amount, PUSH_GAS)) {
                owed[to[i]][token] += amount;
                totalOwed[token] += amount;
                emit Credited(to[i], token, amount);
            }
        }
    }

    /// @notice Sends the caller what it was credited in `token`.
    function withdraw(address token) external nonReentrant returns (uint256 amount) {
        amount = owed[msg.sender][token];
        if (amount == 0) revert NothingToWithdraw(msg.sender, token);
        owed[msg.sender][token] = 0;
        totalOwed[token] -= amount;
        if (!token.send(msg.sender, amount, gasleft())) revert TransferFailed(token, msg.sender, amount);
        emit Withdrawn(msg.sender, token, amount);
    }
}
