// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

/// @title IERC8183
/// @notice ERC-8183 (Agentic Commerce): a job escrow with one evaluator. This is the interface
/// of the ERC's reference implementation (erc-8183/base-contracts at c67e160): the same enum,
/// the same Job struct in the same field order, the same events and errors (so the same
/// topics and selectors) and the same functions, including its public getters and its admin
/// setters. Written from the ERC and the reference's ABI; docs/ERC8183.md lists where Surety's
/// JobEscrow behaves differently and why.
///
/// Life of a job: Open → Funded → Submitted → Completed | Rejected | Expired. The client
/// creates it (the provider may come later through setProvider), the client or the provider
/// sets the budget (token and amount), the client funds it, the provider submits, the
/// evaluator completes (paying the provider, less fees) or rejects (refunding the client);
/// after expiredAt anyone may claimRefund.
interface IERC8183 {
    /// @notice Where a job is. Completed, Rejected and Expired are terminal.
    enum JobStatus {
        Open,
        Funded,
        Submitted,
        Completed,
        Rejected,
        Expired
    }

    /// @notice A job as getJob returns it (the reference's field order).
    struct Job {
        uint256 id;
        address client;
        address provider;
        address evaluator;
        string description;
        uint256 budget;
        uint256 expiredAt;
        JobStatus status;
        address hook;
        address paymentToken;
        uint256 providerAgentId; // ERC-8004 agent id of the provider, 0 if none
        uint256 submittedAt; // when the provider submitted, 0 before
    }

    // --- events (the reference's, topic for topic) ---

    event JobCreated(
        uint256 indexed jobId,
        address indexed client,
        address indexed provider,
        address evaluator,
        uint256 expiredAt,
        address hook
    );
    event ProviderSet(uint256 indexed jobId, address indexed provider, uint256 agentId);
    event BudgetSet(uint256 indexed jobId, address indexed token, uint256 amount);
    event JobFunded(uint256 indexed jobId, address indexed client, uint256 amount);
    event JobSubmitted(uint256 indexed jobId, address indexed provider, bytes32 deliverable);
    event JobCompleted(uint256 indexed jobId, address indexed evaluator, bytes32 reason);
    event JobRejected(uint256 indexed jobId, address indexed rejector, bytes32 reason);
    event JobExpired(uint256 indexed jobId);
    event PaymentReleased(uint256 indexed jobId, address indexed provider, uint256 amount);
    event PlatformFeePaid(uint256 indexed jobId, address indexed platformTreasury, uint256 amount);
    event EvaluatorFeePaid(uint256 indexed jobId, address indexed evaluator, uint256 amount);
    event Refunded(uint256 indexed jobId, address indexed client, uint256 amount);
    event HookWhitelistUpdated(address indexed hook, bool status);
    event PlatformFeeSet(uint256 feeBP, address indexed treasury);
    event EvaluatorFeeSet(uint256 feeBP);

    // --- errors (the reference's, selector for selector) ---

    /// @notice No job has this id.
    error InvalidJob();
    /// @notice The hook does not answer ERC-165 for IERC8183Hook.
    error InvalidHook();
    /// @notice The job's status (or its expiry) does not allow this call.
    error WrongStatus();
    /// @notice The caller does not hold the role this call needs.
    error Unauthorized();
    /// @notice An address that must be set is zero.
    error ZeroAddress();
    /// @notice expiredAt is not more than 5 minutes ahead.
    error ExpiryTooShort();
    /// @notice Nothing arrived when funding a budget above zero (reference: declared, unused).
    error ZeroBudget();
    /// @notice fund before the provider is set.
    error ProviderNotSet();
    /// @notice Platform and evaluator fees above 10,000 basis points together.
    error FeesTooHigh();
    /// @notice The hook is not on the allowlist.
    error HookNotWhitelisted();
    /// @notice fund's expectedBudget is not the job's budget.
    error BudgetMismatch();
    /// @notice The provider and the evaluator are one address.
    error ProviderCannotBeEvaluator();
    /// @notice claimRefund of a submitted job while its evaluator's grace period runs.
    error GracePeriodActive();

    // --- the job's life ---

    /// @notice Opens a job; msg.sender is its client. Returns its id (1, 2, ...).
    function createJob(
        address provider,
        address evaluator,
        uint256 expiredAt,
        string calldata description,
        address hook,
        uint256 providerAgentId
    ) external returns (uint256);

    /// @notice The client names the provider of a job created without one.
    function setProvider(uint256 jobId, address provider, uint256 agentId) external;

    /// @notice The client or the provider sets the job's payment token and amount (Open only).
    function setBudget(uint256 jobId, address token, uint256 amount, bytes calldata optParams) external;

    /// @notice The client escrows the budget; reverts unless it is `expectedBudget`.
    function fund(uint256 jobId, uint256 expectedBudget, bytes calldata optParams) external;

    /// @notice The provider submits its work (Funded, or Open with a zero budget).
    function submit(uint256 jobId, bytes32 deliverable, bytes calldata optParams) external;

    /// @notice The evaluator accepts a submission: the provider is paid, less fees.
    function complete(uint256 jobId, bytes32 reason, bytes calldata optParams) external;

    /// @notice The client (Open) or the evaluator (Funded, Submitted) rejects; escrow goes back.
    function reject(uint256 jobId, bytes32 reason, bytes calldata optParams) external;

    /// @notice Anyone, after expiredAt (and a submitted job's grace period): escrow back to the client.
    function claimRefund(uint256 jobId) external;

    // --- reads ---

    /// @notice The job with id `jobId` (all zero for an unknown id).
    function getJob(uint256 jobId) external view returns (Job memory);

    /// @notice The reference's public mapping getter: getJob's fields as a flat tuple.
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
        );

    /// @notice The id of the last job created (0: none).
    function jobCounter() external view returns (uint256);

    /// @notice How long after a submission the evaluator keeps the job from claimRefund.
    function EVALUATION_GRACE_PERIOD() external view returns (uint256);

    /// @notice The platform's fee on completion, in basis points.
    function platformFeeBP() external view returns (uint256);

    /// @notice The evaluator's fee on completion, in basis points.
    function evaluatorFeeBP() external view returns (uint256);

    /// @notice Receives the platform fee.
    function platformTreasury() external view returns (address);

    /// @notice Whether jobs may name `hook` (address(0), no hook, always may).
    function whitelistedHooks(address hook) external view returns (bool);

    // --- admin ---

    /// @notice Sets the platform fee and its treasury.
    function setPlatformFee(uint256 feeBP, address treasury) external;

    /// @notice Sets the evaluator fee.
    function setEvaluatorFee(uint256 feeBP) external;

    /// @notice Allows (or stops allowing) new jobs to name `hook`.
    function setHookWhitelist(address hook, bool status) external;
}
