// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IStakeRegistry} from "./IStakeRegistry.sol";
import {Transfers} from "./IERC20.sol";
import {ReentrancyGuard} from "./ReentrancyGuard.sol";

/// @title StakeRegistry
/// @notice Agents' bonded stake, in ETH or one ERC-20 fixed at deployment, with their
/// controller wallets, rotation and revocation.
///
/// Stake leaves in two steps: requestUnbond, then withdraw after the unbond delay. Stake is at
/// risk only while it backs a claimed bounty or a joined ERC-8183 job: the escrow locks the
/// bounty's minimum stake at claim and unlocks it when the bounty ends, the job locker (Surety's
/// ERC-8183 hook) does the same for a job's worker, and the arbiter may slash at most that
/// lock, to the poster or client. Locked stake cannot be unbonded, and an agent with locked
/// stake cannot rotate, so nothing front-runs a ruling. There is no owner and no other slashing
/// path: the two lockers are fixed for good when the escrow creates the registry, and each
/// owns one half of the lock ids (JOB_LOCK_BIT set: the job locker's), so neither can unlock
/// or slash a lock of the other.
///
/// Payments follow checks-effects-interactions under a re-entry lock. A slash pushes to the
/// beneficiary with at most PUSH_GAS gas; a beneficiary that refuses is credited instead and
/// withdraws with withdrawCredit, so a ruling never fails on the payment.
contract StakeRegistry is IStakeRegistry, ReentrancyGuard {
    using Transfers for address;

    /// @notice The most gas a pushed slash payment gives its recipient.
    uint256 public constant PUSH_GAS = 100_000;

    /// @notice The staking token; address(0) for ETH.
    address public immutable stakeToken;
    /// @notice Seconds between requestUnbond and withdraw.
    uint64 public immutable unbondDelay;
    /// @notice The stake below which an agent counts as unstaked, fixed for the deployment.
    /// The registry accepts any stake; every Surety node reads this to rank, pre-trust and
    /// weigh alike (a node-local setting would let two nodes disagree).
    uint256 public immutable minStake;
    /// @notice The top bit of a lock id: set on every job lock id, never on a bounty id.
    uint256 public constant JOB_LOCK_BIT = 1 << 255;

    /// @notice The account that may lock, unlock and slash lock ids without JOB_LOCK_BIT: the
    /// bounty escrow that created this registry.
    address public immutable locker;
    /// @notice The account that may lock, unlock and slash lock ids with JOB_LOCK_BIT: Surety's
    /// ERC-8183 hook (address(0): none).
    address public immutable jobLocker;

    mapping(bytes32 agentId => mapping(address controller => Record)) private _records;
    /// @notice The DID an agent rotated to, per controller; zero if it never rotated.
    mapping(bytes32 agentId => mapping(address controller => bytes32)) public successorOf;
    /// @notice The agent each open lock holds stake of (zero: no such lock).
    mapping(uint256 lockId => bytes32 agentId) public lockedAgent;
    /// @notice Slash payments a beneficiary refused, waiting for withdrawCredit.
    mapping(address account => uint256) public credit;

    modifier onlyLockerOf(uint256 lockId) {
        if (msg.sender != lockerOf(lockId)) revert NotLocker(msg.sender);
        _;
    }

    /// @notice Made by its locker (BountyEscrow's constructor), with `jobLocker_` as the job
    /// locker; nobody can change either.
    constructor(address token, uint64 delay, uint256 minStake_, address jobLocker_) {
        stakeToken = token;
        unbondDelay = delay;
        minStake = minStake_;
        locker = msg.sender;
        jobLocker = jobLocker_;
    }

    /// @notice Binds `agentId` to the caller as its controller. `proof` is the agent key's
    /// signature over the binding statement, checked off chain by every node.
    function bind(bytes32 agentId, bytes calldata proof) external {
        if (agentId == 0) revert ZeroAgentId();
        Record storage r = _records[agentId][msg.sender];
        if (r.status != Status.None) revert WrongStatus(agentId, msg.sender, r.status);
        r.status = Status.Bound;
        emit Bound(agentId, msg.sender, proof);
    }

    /// @notice Adds `amount` to the stake of the caller's bound agent (ETH as msg.value; an
    /// ERC-20 must be approved first; what arrives is what counts).
    function stake(bytes32 agentId, uint256 amount) external payable nonReentrant {
        Record storage r = _bound(agentId);
        if (amount == 0) revert InvalidAmount();
        uint256 received = amount;
        if (stakeToken == address(0)) {
            if (msg.value != amount) revert InvalidValue(msg.value, amount);
        } else {
            if (msg.value != 0) revert InvalidValue(msg.value, 0);
            bool ok;
            (received, ok) = stakeToken.pull(msg.sender, amount);
            if (!ok) revert TransferFailed(stakeToken, address(this), amount);
            if (received == 0) revert InvalidAmount();
        }
        uint256 total = uint256(r.staked) + received;
        if (total > type(uint128).max) revert AmountTooLarge(total);
        // forge-lint: disable-next-line(unsafe-typecast) total was checked against uint128 above
        r.staked = uint128(total);
        emit Staked(agentId, msg.sender, received, total);
    }

    /// @notice Starts unbonding `amount` of the caller's unlocked stake for `agentId`. Works
    /// on a revoked or rotated-away agent too, so stake is never stuck. Restarts the delay for
    /// everything unbonding.
    function requestUnbond(bytes32 agentId, uint256 amount) external {
        Record storage r = _records[agentId][msg.sender];
        if (r.status == Status.None) revert WrongStatus(agentId, msg.sender, r.status);
        if (amount == 0) revert InvalidAmount();
        uint256 free = r.staked - r.locked;
        if (amount > free) revert InsufficientStake(free, amount);
        // amount <= r.staked, a uint128, so the casts are exact; the += is overflow-checked.
        // forge-lint: disable-next-line(unsafe-typecast)
        r.staked -= uint128(amount);
        // forge-lint: disable-next-line(unsafe-typecast)
        r.unbonding += uint128(amount);
        uint64 unlockAt = uint64(block.timestamp) + unbondDelay;
        r.unlockAt = unlockAt;
        emit UnbondRequested(agentId, msg.sender, amount, unlockAt);
    }

    /// @notice Pays the caller its unbonded stake for `agentId` once the delay has passed.
    function withdraw(bytes32 agentId) external nonReentrant returns (uint256 amount) {
        Record storage r = _records[agentId][msg.sender];
        amount = r.unbonding;
        if (amount == 0) revert NothingToWithdraw();
        if (block.timestamp < r.unlockAt) revert StillBonded(r.unlockAt);
        r.unbonding = 0;
        if (!stakeToken.send(msg.sender, amount, gasleft())) revert TransferFailed(stakeToken, msg.sender, amount);
        emit Withdrawn(agentId, msg.sender, amount);
    }

    /// @inheritdoc IStakeRegistry
    function lock(uint256 lockId, bytes32 agentId, address controller, uint256 amount) external onlyLockerOf(lockId) {
        if (agentId == 0) revert ZeroAgentId();
        if (lockedAgent[lockId] != 0) revert LockExists(lockId);
        Record storage r = _records[agentId][controller];
        if (r.status != Status.Bound) revert WrongStatus(agentId, controller, r.status);
        uint256 free = r.staked - r.locked;
        if (amount == 0) revert InvalidAmount();
        if (amount > free) revert InsufficientStake(free, amount);
        // amount <= free <= r.staked, a uint128: the cast is exact and the sum stays <= staked.
        // forge-lint: disable-next-line(unsafe-typecast)
        r.locked += uint128(amount);
        lockedAgent[lockId] = agentId;
        emit Locked(agentId, controller, lockId, amount);
    }

    /// @inheritdoc IStakeRegistry
    function unlock(uint256 lockId, address controller, uint256 amount, uint256 slash, address beneficiary)
        external
        onlyLockerOf(lockId)
        nonReentrant
    {
        bytes32 agentId = lockedAgent[lockId];
        if (agentId == 0) {
            if (slash != 0) revert UnknownLock(lockId);
            return;
        }
        if (slash > amount) revert SlashAboveLock(amount, slash);
        if (slash != 0 && beneficiary == address(0)) revert ZeroAddress();
        delete lockedAgent[lockId];
        Record storage r = _records[agentId][controller];
        // The locker passes back what it locked: a wrong amount or controller underflows here.
        // slash <= amount <= locked <= staked, all uint128: the casts are exact.
        // forge-lint: disable-next-line(unsafe-typecast)
        r.locked -= uint128(amount);
        emit Unlocked(agentId, controller, lockId, amount);
        if (slash == 0) return;
        // forge-lint: disable-next-line(unsafe-typecast)
        r.staked -= uint128(slash);
        emit Slashed(agentId, controller, slash, beneficiary, bytes32(lockId));
        if (!stakeToken.send(beneficiary, slash, PUSH_GAS)) {
            credit[beneficiary] += slash;
            emit Credited(beneficiary, slash);
        }
    }

    /// @notice Sends the caller the slash payments it refused before.
    function withdrawCredit() external nonReentrant returns (uint256 amount) {
        amount = credit[msg.sender];
        if (amount == 0) revert NothingToWithdraw();
        credit[msg.sender] = 0;
        if (!stakeToken.send(msg.sender, amount, gasleft())) revert TransferFailed(stakeToken, msg.sender, amount);
        emit CreditWithdrawn(msg.sender, amount);
    }

    /// @notice Moves the caller's agent to a new DID (`newAgentId` = keccak256 of it), stake
    /// and all. `proof` is the new key's signature over the binding, checked off chain. Not
    /// while stake is locked: a pending ruling must find the stake where it was locked.
    function rotate(bytes32 agentId, bytes32 newAgentId, bytes calldata proof) external {
        Record storage r = _bound(agentId);
        if (r.locked != 0) revert StakeLocked(agentId, msg.sender, r.locked);
        Record storage n = _records[newAgentId][msg.sender];
        if (newAgentId == 0) revert ZeroAgentId();
        if (newAgentId == agentId || n.status != Status.None) revert InvalidSuccessor(newAgentId);
        n.staked = r.staked;
        n.unbonding = r.unbonding;
        n.unlockAt = r.unlockAt;
        n.status = Status.Bound;
        delete _records[agentId][msg.sender];
        _records[agentId][msg.sender].status = Status.Rotated;
        successorOf[agentId][msg.sender] = newAgentId;
        emit Rotated(agentId, msg.sender, newAgentId, proof);
    }

    /// @notice Revokes the caller's agent: its stake stops counting (nodes refuse its
    /// envelopes) but stays withdrawable through requestUnbond and withdraw.
    function revoke(bytes32 agentId) external {
        Record storage r = _bound(agentId);
        r.status = Status.Revoked;
        emit Revoked(agentId, msg.sender);
    }

    /// @inheritdoc IStakeRegistry
    function stakeOf(bytes32 agentId, address controller) external view returns (uint256) {
        Record storage r = _records[agentId][controller];
        return r.status == Status.Bound ? r.staked : 0;
    }

    /// @notice The account that may lock, unlock and slash `lockId`: the job locker for an id
    /// with JOB_LOCK_BIT, the escrow for any other.
    function lockerOf(uint256 lockId) public view returns (address) {
        return lockId & JOB_LOCK_BIT != 0 ? jobLocker : locker;
    }

    /// @notice The whole record of `agentId` under `controller`.
    function recordOf(bytes32 agentId, address controller) external view returns (Record memory) {
        return _records[agentId][controller];
    }

    /// @inheritdoc IStakeRegistry
    function freeStakeOf(bytes32 agentId, address controller) external view returns (uint256) {
        Record storage r = _records[agentId][controller];
        return r.status == Status.Bound ? r.staked - r.locked : 0;
    }

    function _bound(bytes32 agentId) private view returns (Record storage r) {
        r = _records[agentId][msg.sender];
        if (r.status != Status.Bound) revert WrongStatus(agentId, msg.sender, r.status);
    }
}
