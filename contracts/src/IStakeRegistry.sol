// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title IStakeRegistry
/// @notice Types, errors and events of Surety's stake registry.
///
/// An agent is identified by `agentId = keccak256(bytes(did))`. Its controller is the wallet
/// that bound it: the wallet proves itself as msg.sender, and the agent key's signature over
/// the binding statement (`proof`, a JWS) is checked off chain by every Surety node. Because
/// that signature cannot be checked here, records are kept per (agent, controller): a wallet
/// that binds someone else's agent with a bogus proof blocks nobody, and nodes count only
/// bindings whose proof verifies.
interface IStakeRegistry {
    /// @notice Where an (agent, controller) record is. Rotated and Revoked are final.
    enum Status {
        None,
        Bound,
        Rotated, // the controller moved the agent to a new DID; the stake moved with it
        Revoked // the controller revoked the DID; its stake no longer counts but can be withdrawn
    }

    /// @notice One agent's stake under one controller.
    struct Record {
        uint128 staked; // counts as stake
        uint128 unbonding; // leaving; withdrawable at unlockAt, slashable until then
        uint64 unlockAt;
        Status status;
    }

    /// @notice The record is not in a status that allows this.
    error WrongStatus(bytes32 agentId, address controller, Status status);
    /// @notice Amount zero, or nothing arrived.
    error InvalidAmount();
    /// @notice msg.value does not match: the amount for ETH, zero for a token.
    error InvalidValue(uint256 sent, uint256 expected);
    /// @notice More than the record holds.
    error InsufficientStake(uint256 available, uint256 requested);
    /// @notice Unbonding stake is not withdrawable yet.
    error StillBonded(uint64 unlockAt);
    /// @notice Nothing is unbonding.
    error NothingToWithdraw();
    /// @notice The caller is not an authorized slasher.
    error NotSlasher(address caller);
    /// @notice Only the owner may do this.
    error NotOwner(address caller);
    /// @notice An address that must be set is zero.
    error ZeroAddress();
    /// @notice Rotation to the same id or to an id this controller already used.
    error InvalidSuccessor(bytes32 newAgentId);
    /// @notice A transfer failed (reverted, or a token returned false).
    error TransferFailed(address token, address to, uint256 amount);
    /// @notice A call re-entered the registry.
    error Reentrancy();
    /// @notice The stake amount does not fit in 128 bits.
    error AmountTooLarge(uint256 amount);

    /// @notice A controller bound an agent (None → Bound); `proof` is the agent key's JWS.
    event Bound(bytes32 indexed agentId, address indexed controller, bytes proof);
    /// @notice Stake was added.
    event Staked(bytes32 indexed agentId, address indexed controller, uint256 amount, uint256 staked);
    /// @notice Stake started unbonding.
    event UnbondRequested(bytes32 indexed agentId, address indexed controller, uint256 amount, uint64 unlockAt);
    /// @notice Unbonded stake was paid out to the controller.
    event Withdrawn(bytes32 indexed agentId, address indexed controller, uint256 amount);
    /// @notice A slasher took stake to a beneficiary.
    event Slashed(bytes32 indexed agentId, address indexed controller, uint256 amount, address beneficiary, bytes32 reason);
    /// @notice The controller moved the agent to a new DID (Bound → Rotated; new record → Bound).
    event Rotated(bytes32 indexed agentId, address indexed controller, bytes32 indexed newAgentId, bytes proof);
    /// @notice The controller revoked the agent (Bound → Revoked).
    event Revoked(bytes32 indexed agentId, address indexed controller);
    /// @notice A slasher was authorized or deauthorized.
    event SlasherSet(address indexed slasher, bool allowed);
    /// @notice The owner changed.
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    /// @notice The stake that counts for `agentId` under `controller`: zero unless Bound.
    function stakeOf(bytes32 agentId, address controller) external view returns (uint256);
}
