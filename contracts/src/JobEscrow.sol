// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IERC8183} from "./IERC8183.sol";
import {IERC8183Hook} from "./IERC8183Hook.sol";
import {IERC165} from "./IERC165.sol";
import {Transfers} from "./IERC20.sol";
import {Owned} from "./Owned.sol";
import {ReentrancyGuard} from "./ReentrancyGuard.sol";

/// @title JobEscrow
/// @notice Surety's ERC-8183 (Agentic Commerce) job escrow: the reference implementation's
/// interface and state machine (erc-8183/base-contracts at c67e160), written anew, with the
/// fixes docs/ERC8183.md lists ("Where we differ from the reference and the ERC text"):
///
/// - claimRefund of an expired job that was never funded pays nothing (it has no escrow);
/// - once a payment token is set, only the client may switch it, so a provider cannot change
///   the token under the client's expectedBudget between the client's read and fund;
/// - fund books what arrived: with a fee-on-transfer token the job's budget becomes the amount
///   the escrow received, and that is what it pays out or refunds;
/// - every function of a job's life holds one re-entry lock, so a hook (or a token) cannot
///   re-enter to move a job twice;
/// - fees are computed without overflow, so a job of any budget can be completed.
///
/// Not upgradeable; an `Owned` owner (two-step handover) holds the reference's admin role
/// (fees, treasury, hook allowlist). Payouts go through `Transfers`: a payout that fails
/// reverts the action, as the reference's SafeERC20 does.
///
/// Storage: a job lives in four slots written once each (createJob writes three, the first
/// setBudget the fourth) and updated in place after; a description past its first 22 bytes
/// takes a slot per 32 bytes more, and a hook, a non-zero agent id or a budget of 2^96 or more
/// a slot each, only on the jobs that have them.
contract JobEscrow is IERC8183, Owned, ReentrancyGuard {
    using Transfers for address;

    /// @notice How long after a submission the evaluator has before claimRefund may expire it.
    uint256 public constant EVALUATION_GRACE_PERIOD = 1 hours;
    /// @notice The shortest time from createJob to expiredAt (the reference: more than 5 minutes).
    uint256 public constant MIN_EXPIRY = 5 minutes;
    /// @notice Basis points of a whole.
    uint256 private constant BP = 10_000;

    uint8 private constant HAS_HOOK = 1;
    uint8 private constant BIG_BUDGET = 2;
    uint8 private constant HAS_PROVIDER = 4;
    /// @dev How many bytes of a description slots 1 and 2 hold beside the provider and the evaluator.
    uint256 private constant INLINE = 22;

    /// @notice expiredAt beyond what a job stores (2^40 - 1 seconds: the year 36812).
    error ExpiryTooLong(uint256 expiredAt);
    /// @notice The provider may not switch the payment token the job already has: only the client may.
    error PaymentTokenLocked(address token);
    /// @notice A payout failed (the token reverted or returned false): the action is undone.
    error TransferFailed(address token, address to, uint256 amount);
    /// @notice A description longer than 65,535 bytes (no block holds the gas to store one).
    error DescriptionTooLong(uint256 length);

    /// @dev A job as stored. Slot 0 changes with every transition; slots 1 and 2 are written
    /// at createJob (setProvider fills an empty provider), slot 3 at setBudget (which may
    /// rewrite it while the job is Open). The description's first 22 bytes ride in slots 1 and
    /// 2 beside the provider and the evaluator, the rest a word a slot.
    struct Stored {
        // slot 0
        address client;
        uint40 expiredAt;
        uint40 submittedAt;
        JobStatus status;
        uint8 flags; // HAS_HOOK | BIG_BUDGET | HAS_PROVIDER
        // slot 1
        address provider;
        bytes12 description0; // the description's bytes 0 to 11
        // slot 2
        address evaluator;
        uint16 descriptionLength;
        bytes10 description1; // bytes 12 to 21
        // slot 3
        address paymentToken;
        uint96 budget; // when it fits (else bigBudget)
        // only when a job has them
        address hook;
        uint256 bigBudget;
        uint256 agentId;
        mapping(uint256 word => bytes32) descriptionRest; // bytes 22 on, 32 a word
    }

    /// @notice Receives the platform fee.
    address public platformTreasury;
    uint16 private _platformFeeBP;
    uint16 private _evaluatorFeeBP;
    /// @notice The id of the last job created (0: none).
    uint256 public jobCounter;
    mapping(uint256 jobId => Stored) private _jobs;
    mapping(address hook => bool) private _allowedHooks;

    /// @notice Deploys the escrow with no fees; `treasury_` receives platform fees once the
    /// owner sets one.
    constructor(address owner_, address treasury_) Owned(owner_) {
        if (owner_ == address(0) || treasury_ == address(0)) revert ZeroAddress();
        platformTreasury = treasury_;
        emit PlatformFeeSet(0, treasury_);
    }

    // --- admin ---

    /// @inheritdoc IERC8183
    function setPlatformFee(uint256 feeBP, address treasury) external onlyOwner {
        if (treasury == address(0)) revert ZeroAddress();
        if (feeBP > BP || feeBP + _evaluatorFeeBP > BP) revert FeesTooHigh();
        // forge-lint: disable-next-line(unsafe-typecast) feeBP <= 10,000, checked above
        _platformFeeBP = uint16(feeBP);
        platformTreasury = treasury;
        emit PlatformFeeSet(feeBP, treasury);
    }

    /// @inheritdoc IERC8183
    function setEvaluatorFee(uint256 feeBP) external onlyOwner {
        if (feeBP > BP || feeBP + _platformFeeBP > BP) revert FeesTooHigh();
        // forge-lint: disable-next-line(unsafe-typecast) feeBP <= 10,000, checked above
        _evaluatorFeeBP = uint16(feeBP);
        emit EvaluatorFeeSet(feeBP);
    }

    /// @inheritdoc IERC8183
    function setHookWhitelist(address hook, bool status) external onlyOwner {
        if (hook == address(0)) revert ZeroAddress();
        _allowedHooks[hook] = status;
        emit HookWhitelistUpdated(hook, status);
    }

    /// @inheritdoc IERC8183
    function platformFeeBP() external view returns (uint256) {
        return _platformFeeBP;
    }

    /// @inheritdoc IERC8183
    function evaluatorFeeBP() external view returns (uint256) {
        return _evaluatorFeeBP;
    }

    /// @inheritdoc IERC8183
    function whitelistedHooks(address hook) public view returns (bool) {
        return hook == address(0) || _allowedHooks[hook];
    }

    // --- the job's life ---

    /// @inheritdoc IERC8183
    function createJob(
        address provider,
        address evaluator,
        uint256 expiredAt,
        string calldata description,
        address hook,
        uint256 providerAgentId
    ) external nonReentrant returns (uint256 jobId) {
        if (evaluator == address(0)) revert ZeroAddress();
        if (evaluator == provider) revert ProviderCannotBeEvaluator();
        if (expiredAt <= block.timestamp + MIN_EXPIRY) revert ExpiryTooShort();
        if (expiredAt > type(uint40).max) revert ExpiryTooLong(expiredAt);
        if (!whitelistedHooks(hook)) revert HookNotWhitelisted();
        if (hook != address(0) && !_isHook(hook)) revert InvalidHook();

        jobId = ++jobCounter;
        Stored storage j = _jobs[jobId];
        uint8 flags = hook == address(0) ? 0 : HAS_HOOK;
        if (provider != address(0)) {
            j.provider = provider;
            flags |= HAS_PROVIDER;
            if (providerAgentId != 0) j.agentId = providerAgentId;
        }
        j.client = msg.sender;
        // forge-lint: disable-next-line(unsafe-typecast) expiredAt <= 2^40 - 1, checked above
        j.expiredAt = uint40(expiredAt);
        j.flags = flags;
        j.evaluator = evaluator;
        if (hook != address(0)) j.hook = hook;
        _storeDescription(j, description);

        emit JobCreated(jobId, msg.sender, provider, evaluator, expiredAt, hook);
        if (hook != address(0)) {
            IERC8183Hook(hook).afterAction(jobId, msg.sig, abi.encode(msg.sender, provider, evaluator));
        }
    }

    /// @inheritdoc IERC8183
    function setProvider(uint256 jobId, address provider, uint256 agentId) external nonReentrant {
        Stored storage j = _job(jobId);
        if (j.status != JobStatus.Open) revert WrongStatus();
        if (msg.sender != j.client) revert Unauthorized();
        if (j.provider != address(0)) revert WrongStatus();
        if (provider == address(0)) revert ZeroAddress();
        if (provider == j.evaluator) revert ProviderCannotBeEvaluator();
        j.provider = provider;
        j.flags |= HAS_PROVIDER;
        if (agentId != 0) j.agentId = agentId;
        emit ProviderSet(jobId, provider, agentId);
    }

    /// @inheritdoc IERC8183
    function setBudget(uint256 jobId, address token, uint256 amount, bytes calldata optParams) external nonReentrant {
        Stored storage j = _job(jobId);
        if (j.status != JobStatus.Open) revert WrongStatus();
        address client = j.client;
        if (msg.sender != client && msg.sender != j.provider) revert Unauthorized();
        if (token == address(0)) revert ZeroAddress();
        if (msg.sender != client) {
            address current = j.paymentToken;
            if (current != address(0) && current != token) revert PaymentTokenLocked(current);
        }

        bytes memory data;
        address hook = _hookOf(j);
        if (hook != address(0)) {
            data = abi.encode(msg.sender, token, amount, optParams);
            IERC8183Hook(hook).beforeAction(jobId, msg.sig, data);
        }
        j.paymentToken = token;
        _storeBudget(j, amount);
        emit BudgetSet(jobId, token, amount);
        if (hook != address(0)) IERC8183Hook(hook).afterAction(jobId, msg.sig, data);
    }

    /// @inheritdoc IERC8183
    function fund(uint256 jobId, uint256 expectedBudget, bytes calldata optParams) external nonReentrant {
        Stored storage j = _job(jobId);
        if (j.status != JobStatus.Open) revert WrongStatus();
        address client = j.client;
        if (msg.sender != client) revert Unauthorized();
        if ((j.flags & HAS_PROVIDER) == 0) revert ProviderNotSet();
        uint256 budget = _budgetOf(j);
        if (budget != expectedBudget) revert BudgetMismatch();
        if (block.timestamp >= j.expiredAt) revert WrongStatus();

        bytes memory data;
        address hook = _hookOf(j);
        if (hook != address(0)) {
            data = abi.encode(msg.sender, optParams);
            IERC8183Hook(hook).beforeAction(jobId, msg.sig, data);
        }
        j.status = JobStatus.Funded;
        if (budget > 0) {
            address token = j.paymentToken;
            (uint256 received, bool ok) = token.pull(client, budget);
            if (!ok) revert TransferFailed(token, address(this), budget);
            if (received == 0) revert ZeroBudget();
            if (received < budget) {
                // A fee-on-transfer token: the job holds, and later pays or refunds, what arrived.
                budget = received;
                _storeBudget(j, budget);
            }
        }
        emit JobFunded(jobId, client, budget);
        if (hook != address(0)) IERC8183Hook(hook).afterAction(jobId, msg.sig, data);
    }

    /// @inheritdoc IERC8183
    function submit(uint256 jobId, bytes32 deliverable, bytes calldata optParams) external nonReentrant {
        Stored storage j = _job(jobId);
        JobStatus status = j.status;
        if (status != JobStatus.Funded && (status != JobStatus.Open || _budgetOf(j) > 0)) revert WrongStatus();
        if (msg.sender != j.provider) revert Unauthorized();

        bytes memory data;
        address hook = _hookOf(j);
        if (hook != address(0)) {
            data = abi.encode(msg.sender, deliverable, optParams);
            IERC8183Hook(hook).beforeAction(jobId, msg.sig, data);
        }
        j.status = JobStatus.Submitted;
        j.submittedAt = uint40(block.timestamp);
        emit JobSubmitted(jobId, msg.sender, deliverable);
        if (hook != address(0)) IERC8183Hook(hook).afterAction(jobId, msg.sig, data);
    }

    /// @inheritdoc IERC8183
    function complete(uint256 jobId, bytes32 reason, bytes calldata optParams) external nonReentrant {
        Stored storage j = _job(jobId);
        if (j.status != JobStatus.Submitted) revert WrongStatus();
        address evaluator = j.evaluator;
        if (msg.sender != evaluator) revert Unauthorized();

        bytes memory data;
        address hook = _hookOf(j);
        if (hook != address(0)) {
            data = abi.encode(msg.sender, reason, optParams);
            IERC8183Hook(hook).beforeAction(jobId, msg.sig, data);
        }
        j.status = JobStatus.Completed;

        uint256 amount = _budgetOf(j);
        address provider = j.provider;
        uint256 net = amount;
        if (amount > 0) {
            address token = j.paymentToken;
            address treasury = platformTreasury;
            uint256 platformFee = _fee(amount, _platformFeeBP);
            uint256 evaluatorFee = _fee(amount, _evaluatorFeeBP);
            net = amount - platformFee - evaluatorFee;
            if (platformFee > 0) {
                _pay(token, treasury, platformFee);
                emit PlatformFeePaid(jobId, treasury, platformFee);
            }
            if (evaluatorFee > 0) {
                _pay(token, evaluator, evaluatorFee);
                emit EvaluatorFeePaid(jobId, evaluator, evaluatorFee);
            }
            if (net > 0) _pay(token, provider, net);
        }
        emit JobCompleted(jobId, evaluator, reason);
        emit PaymentReleased(jobId, provider, net);
        if (hook != address(0)) IERC8183Hook(hook).afterAction(jobId, msg.sig, data);
    }

    /// @inheritdoc IERC8183
    function reject(uint256 jobId, bytes32 reason, bytes calldata optParams) external nonReentrant {
        Stored storage j = _job(jobId);
        JobStatus prev = j.status;
        if (prev == JobStatus.Open) {
            if (msg.sender != j.client) revert Unauthorized();
        } else if (prev == JobStatus.Funded || prev == JobStatus.Submitted) {
            if (msg.sender != j.evaluator) revert Unauthorized();
        } else {
            revert WrongStatus();
        }

        bytes memory data;
        address hook = _hookOf(j);
        if (hook != address(0)) {
            data = abi.encode(msg.sender, reason, optParams);
            IERC8183Hook(hook).beforeAction(jobId, msg.sig, data);
        }
        j.status = JobStatus.Rejected;
        // An Open job holds nothing: its budget, if set, was never funded.
        if (prev != JobStatus.Open) _refund(j, jobId);
        emit JobRejected(jobId, msg.sender, reason);
        if (hook != address(0)) IERC8183Hook(hook).afterAction(jobId, msg.sig, data);
    }

    /// @inheritdoc IERC8183
    function claimRefund(uint256 jobId) external nonReentrant {
        Stored storage j = _job(jobId);
        JobStatus prev = j.status;
        if (prev != JobStatus.Open && prev != JobStatus.Funded && prev != JobStatus.Submitted) revert WrongStatus();
        if (block.timestamp < j.expiredAt) revert WrongStatus();
        if (prev == JobStatus.Submitted && block.timestamp < uint256(j.submittedAt) + EVALUATION_GRACE_PERIOD) {
            revert GracePeriodActive();
        }
        j.status = JobStatus.Expired;
        // An Open job holds nothing: its budget, if set, was never funded (the reference pays
        // it anyway, out of the other jobs' escrow).
        if (prev != JobStatus.Open) _refund(j, jobId);
        emit JobExpired(jobId);
    }

    // --- reads ---

    /// @inheritdoc IERC8183
    function getJob(uint256 jobId) public view returns (Job memory job) {
        Stored storage j = _jobs[jobId];
        address client = j.client;
        if (client == address(0)) return job;
        job.id = jobId;
        job.client = client;
        job.provider = j.provider;
        job.evaluator = j.evaluator;
        job.description = _descriptionOf(j);
        job.budget = _budgetOf(j);
        job.expiredAt = j.expiredAt;
        job.status = j.status;
        job.hook = _hookOf(j);
        job.paymentToken = j.paymentToken;
        job.providerAgentId = j.agentId;
        job.submittedAt = j.submittedAt;
    }

    /// @inheritdoc IERC8183
    function jobs(uint256 jobId)
        external
        view
        returns (
            uint256 id,
            address client,
            address provider,
            address evaluator,
            string memory description,
            uint256 budget,
            uint256 expiredAt,
            JobStatus status,
            address hook,
            address paymentToken,
            uint256 providerAgentId,
            uint256 submittedAt
        )
    {
        Job memory j = getJob(jobId);
        return (
            j.id,
            j.client,
            j.provider,
            j.evaluator,
            j.description,
            j.budget,
            j.expiredAt,
            j.status,
            j.hook,
            j.paymentToken,
            j.providerAgentId,
            j.submittedAt
        );
    }

    // --- internals ---

    function _job(uint256 jobId) private view returns (Stored storage j) {
        j = _jobs[jobId];
        if (j.client == address(0)) revert InvalidJob();
    }

    function _hookOf(Stored storage j) private view returns (address) {
        return (j.flags & HAS_HOOK) != 0 ? j.hook : address(0);
    }

    function _budgetOf(Stored storage j) private view returns (uint256) {
        return (j.flags & BIG_BUDGET) != 0 ? j.bigBudget : j.budget;
    }

    function _storeBudget(Stored storage j, uint256 amount) private {
        uint8 flags = j.flags;
        if (amount <= type(uint96).max) {
            // forge-lint: disable-next-line(unsafe-typecast) amount <= 2^96 - 1, checked above
            j.budget = uint96(amount);
            if ((flags & BIG_BUDGET) != 0) j.flags = flags & ~BIG_BUDGET;
        } else {
            j.budget = type(uint96).max;
            j.bigBudget = amount;
            if ((flags & BIG_BUDGET) == 0) j.flags = flags | BIG_BUDGET;
        }
    }

    /// @dev Stores the description: bytes 0 to 21 beside the provider and the evaluator, the
    /// rest a word a slot; every word masked to the description's length.
    function _storeDescription(Stored storage j, string calldata description) private {
        uint256 n = bytes(description).length;
        if (n == 0) return;
        if (n > type(uint16).max) revert DescriptionTooLong(n);
        // forge-lint: disable-next-line(unsafe-typecast) n <= 65,535, checked above
        j.descriptionLength = uint16(n);
        j.description0 = bytes12(_word(description, 0));
        if (n > 12) j.description1 = bytes10(_word(description, 12));
        for (uint256 at = INLINE; at < n; at += 32) {
            j.descriptionRest[(at - INLINE) / 32] = _word(description, at);
        }
    }

    /// @dev The 32 bytes of `s` from `at` (< its length), zero past its end.
    function _word(string calldata s, uint256 at) private pure returns (bytes32 w) {
        assembly ("memory-safe") {
            w := calldataload(add(s.offset, at))
        }
        uint256 rest = bytes(s).length - at;
        if (rest < 32) w &= bytes32(~(type(uint256).max >> (rest * 8)));
    }

    function _descriptionOf(Stored storage j) private view returns (string memory) {
        uint256 n = j.descriptionLength;
        // Room for the last word's spill: the length is set to n at the end.
        bytes memory b = new bytes(n + 64);
        bytes12 d0 = j.description0;
        bytes10 d1 = j.description1;
        assembly ("memory-safe") {
            mstore(add(b, 32), d0)
            mstore(add(b, 44), d1)
        }
        for (uint256 at = INLINE; at < n; at += 32) {
            bytes32 w = j.descriptionRest[(at - INLINE) / 32];
            assembly ("memory-safe") {
                mstore(add(add(b, 32), at), w)
            }
        }
        assembly ("memory-safe") {
            mstore(b, n)
        }
        return string(b);
    }

    /// @dev floor(amount × bp / 10,000) for any amount: amount × bp alone overflows above
    /// 2^256 / 10,000, which would leave such a job impossible to complete.
    function _fee(uint256 amount, uint256 bp) private pure returns (uint256) {
        if (bp == 0) return 0;
        return amount / BP * bp + amount % BP * bp / BP;
    }

    function _refund(Stored storage j, uint256 jobId) private {
        uint256 amount = _budgetOf(j);
        if (amount == 0) return;
        address client = j.client;
        _pay(j.paymentToken, client, amount);
        emit Refunded(jobId, client, amount);
    }

    function _pay(address token, address to, uint256 amount) private {
        if (!token.send(to, amount, gasleft())) revert TransferFailed(token, to, amount);
    }

    /// @dev ERC-165 as the standard detects it: the hook claims IERC165, denies 0xffffffff,
    /// and claims IERC8183Hook.
    function _isHook(address hook) private view returns (bool) {
        return _supports(hook, type(IERC165).interfaceId) && !_supports(hook, 0xffffffff)
            && _supports(hook, type(IERC8183Hook).interfaceId);
    }

    function _supports(address target, bytes4 interfaceId) private view returns (bool) {
        (bool ok, bytes memory ret) =
            target.staticcall{gas: 30_000}(abi.encodeCall(IERC165.supportsInterface, (interfaceId)));
        return ok && ret.length >= 32 && abi.decode(ret, (uint256)) != 0;
    }
}
