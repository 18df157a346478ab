// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IStakeRegistry} from "./IStakeRegistry.sol";
import {Transfers} from "./IERC20.sol";

/// @title StakeRegistry
/// @notice Agents' bonded stake, in ETH or one ERC-20 fixed at deployment, with their
/// controller wallets, rotation and revocation.
///
/// Stake leaves in two steps: requestUnbond, then withdraw after UNBOND_DELAY, so an agent that
/// misbehaves can still be slashed for a while after it asks to leave. Slashing pays the
/// beneficiary directly (a failed transfer reverts the slash, leaving the stake in place);
/// withdrawals pay the controller. Both follow checks-effects-interactions and are guarded
/// against re-entry.
contract StakeRegistry is IStakeRegistry {
    using Transfers for address;

    /// @notice The staking token; address(0) for ETH.
    address public immutable stakeToken;
    /// @notice Seconds between requestUnbond and withdraw.
    uint64 public immutable unbondDelay;

    /// @notice May authorize slashers.
    address public owner;
    /// @notice Accounts allowed to slash (e.g. the escrow's arbiters).
    mapping(address => bool) public isSlasher;

    mapping(bytes32 agentId => mapping(address controller => Record)) private _records;
    /// @notice The DID an agent rotated to, per controller; zero if it never rotated.
    mapping(bytes32 agentId => mapping(address controller => bytes32)) public successorOf;

    bool private transient _entered;

    modifier nonReentrant() {
        if (_entered) revert Reentrancy();
        _entered = true;
        _;
        _entered = false;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _;
    }

    constructor(address token, uint64 delay, address owner_) {
        if (owner_ == address(0)) revert ZeroAddress();
        stakeToken = token;
        unbondDelay = delay;
        owner = owner_;
        emit OwnershipTransferred(address(0), owner_);
    }

    /// @notice Binds `agentId` to the caller as its controller. `proof` is the agent key's
    /// signature over the binding statement, checked off chain by every node.
    function bind(bytes32 agentId, bytes calldata proof) external {
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

    /// @notice Starts unbonding `amount` of the caller's stake for `agentId`. Works on a
    /// revoked or rotated-away agent too, so stake is never stuck. Restarts the delay for
    /// everything unbonding.
    function requestUnbond(bytes32 agentId, uint256 amount) external {
        Record storage r = _records[agentId][msg.sender];
        if (r.status == Status.None) revert WrongStatus(agentId, msg.sender, r.status);
        if (amount == 0) revert InvalidAmount();
        if (amount > r.staked) revert InsufficientStake(r.staked, amount);
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

    /// @notice Takes `amount` of an agent's stake (bonded first, then unbonding) to
    /// `beneficiary`. Only authorized slashers.
    function slash(bytes32 agentId, address controller, uint256 amount, address beneficiary, bytes32 reason)
        external
        nonReentrant
    {
        if (!isSlasher[msg.sender]) revert NotSlasher(msg.sender);
        if (beneficiary == address(0)) revert ZeroAddress();
        if (amount == 0) revert InvalidAmount();
        Record storage r = _records[agentId][controller];
        uint256 available = uint256(r.staked) + r.unbonding;
        if (amount > available) revert InsufficientStake(available, amount);
        uint256 fromStaked = amount < r.staked ? amount : r.staked;
        // fromStaked <= r.staked and amount - fromStaked <= r.unbonding: both fit in uint128.
        // forge-lint: disable-next-line(unsafe-typecast)
        r.staked -= uint128(fromStaked);
        // forge-lint: disable-next-line(unsafe-typecast)
        r.unbonding -= uint128(amount - fromStaked);
        if (!stakeToken.send(beneficiary, amount, gasleft())) revert TransferFailed(stakeToken, beneficiary, amount);
        emit Slashed(agentId, controller, amount, beneficiary, reason);
    }

    /// @notice Moves the caller's agent to a new DID (`newAgentId` = keccak256 of it), stake
    /// and all. `proof` is the new key's signature over the binding, checked off chain.
    function rotate(bytes32 agentId, bytes32 newAgentId, bytes calldata proof) external {
        Record storage r = _bound(agentId);
        Record storage n = _records[newAgentId][msg.sender];
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

    /// @notice The whole record of `agentId` under `controller`.
    function recordOf(bytes32 agentId, address controller) external view returns (Record memory) {
        return _records[agentId][controller];
    }

    /// @notice Authorizes or deauthorizes a slasher.
    function setSlasher(address slasher, bool allowed) external onlyOwner {
        if (slasher == address(0)) revert ZeroAddress();
        isSlasher[slasher] = allowed;
        emit SlasherSet(slasher, allowed);
    }

    /// @notice Hands the owner role to `newOwner`.
    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert ZeroAddress();
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    function _bound(bytes32 agentId) private view returns (Record storage r) {
        r = _records[agentId][msg.sender];
        if (r.status != Status.Bound) revert WrongStatus(agentId, msg.sender, r.status);
    }
}
