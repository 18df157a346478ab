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
///
/// Stake is at risk only through bounties and ERC-8183 jobs. Two lockers, both fixed when the
/// escrow's constructor creates the registry: the escrow locks a claiming worker's stake for
/// the bounty's life and releases it when the bounty ends, and the job locker (Surety's
/// ERC-8183 hook, whose address the deployer predicts) does the same for a worker joining a
/// job; an arbiter's dispute ruling can slash at most the lock, to the poster or client. Lock
/// ids are split between them: the job locker's have the top bit (JOB_LOCK_BIT) set, the
/// escrow's never do (a bounty id is below 2^53), and each locker may lock, unlock and slash
/// only ids of its own half, so neither can touch the other's locks. No other account can
/// take stake, and the registry has no owner.
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
        uint128 unbonding; // leaving; withdrawable at unlockAt
        uint64 unlockAt;
        Status status;
        uint128 locked; // part of staked that backs claimed bounties: no unbond, no rotation
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
    /// @notice The caller is not the locker of this lock id (the escrow for ids without
    /// JOB_LOCK_BIT, the job locker for ids with it).
    error NotLocker(address caller);
    /// @notice A lock with this id exists already.
    error LockExists(uint256 lockId);
    /// @notice No lock has this id.
    error UnknownLock(uint256 lockId);
    /// @notice A slash above the lock it comes from.
    error SlashAboveLock(uint256 locked, uint256 slash);
    /// @notice Stake is locked by open bounties; rotation waits until they end.
    error StakeLocked(bytes32 agentId, address controller, uint256 locked);
    /// @notice The zero agent id (keccak256 of a DID is never zero).
    error ZeroAgentId();
    /// @notice An address that must be set is zero.
    error ZeroAddress();
    /// @notice Rotation to the same id or to an id this controller already used.
    error InvalidSuccessor(bytes32 newAgentId);
    /// @notice A transfer failed (reverted, or a token returned false).
    error TransferFailed(address token, address to, uint256 amount);
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
    /// @notice A locker locked `amount` of an agent's stake under `lockId` (a bounty id, or a
    /// job lock id with JOB_LOCK_BIT set).
    event Locked(bytes32 indexed agentId, address indexed controller, uint256 indexed lockId, uint256 amount);
    /// @notice The lock ended: `amount` is free again (less what a slash took).
    event Unlocked(bytes32 indexed agentId, address indexed controller, uint256 indexed lockId, uint256 amount);
    /// @notice A dispute ruling took locked stake to the beneficiary; `reason` is the lock id.
    event Slashed(
        bytes32 indexed agentId, address indexed controller, uint256 amount, address beneficiary, bytes32 reason
    );
    /// @notice A payout the beneficiary refused was credited; it withdraws it with withdrawCredit.
    event Credited(address indexed account, uint256 amount);
    /// @notice An account withdrew what it was credited.
    event CreditWithdrawn(address indexed account, uint256 amount);
    /// @notice The controller moved the agent to a new DID (Bound → Rotated; new record → Bound).
    event Rotated(bytes32 indexed agentId, address indexed controller, bytes32 indexed newAgentId, bytes proof);
    /// @notice The controller revoked the agent (Bound → Revoked).
    event Revoked(bytes32 indexed agentId, address indexed controller);

    /// @notice The account that locks, unlocks and slashes job lock ids (JOB_LOCK_BIT set):
    /// Surety's ERC-8183 hook, fixed at construction; address(0) for none.
    function jobLocker() external view returns (address);

    /// @notice The stake that counts for `agentId` under `controller`: zero unless Bound.
    function stakeOf(bytes32 agentId, address controller) external view returns (uint256);

    /// @notice The part of that stake no bounty has locked: what a new claim can lock.
    function freeStakeOf(bytes32 agentId, address controller) external view returns (uint256);

    /// @notice Locks `amount` of the free stake of `agentId` under `controller` as `lockId`.
    /// Only the lock id's locker; the record must be Bound.
    function lock(uint256 lockId, bytes32 agentId, address controller, uint256 amount) external;

    /// @notice Ends lock `lockId` of `amount` under `controller`, first paying `slash` of it to
    /// `beneficiary` (0: no slash). Only the lock id's locker; a lockId never locked is a no-op for an
    /// unslashed unlock (a bounty whose worker the poster assigned holds no lock).
    function unlock(uint256 lockId, address controller, uint256 amount, uint256 slash, address beneficiary) external;
}
