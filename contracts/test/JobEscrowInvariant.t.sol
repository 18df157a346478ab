// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test, Common} from "./lib/Test.sol";
import {JobEscrow} from "../src/JobEscrow.sol";
import {IERC8183} from "../src/IERC8183.sol";
import {MockERC20, FeeOnTransferToken} from "./mocks/Tokens.sol";
import {RecordingHook} from "./mocks/Hooks.sol";

/// @notice Drives JobEscrow with random but well-formed calls from two clients, two providers
/// and two evaluators, in a plain ERC-20 and a fee-on-transfer token, with and without a hook,
/// under changing fees; and watches every settlement's token flow. Calls are not wrapped in
/// try/catch: a call the escrow refuses reverts the handler call (forge counts it).
contract JobHandler is Common {
    struct Mirror {
        uint256 id;
        address client;
        address provider;
        address evaluator;
        IERC8183.JobStatus status; // as last seen
        uint256 held; // what arrived at fund and is still escrowed
        uint256 settled; // settlements that moved tokens out (at most one)
    }

    JobEscrow public immutable escrow;
    address public immutable owner;
    address public immutable hook;
    address[] public tokens;
    address[2] public clients = [address(0xC1), address(0xC2)];
    address[2] public providers = [address(0xB1), address(0xB2)];
    address[2] public evaluators = [address(0xE1), address(0xE2)];

    Mirror[] internal _jobs;
    bool public terminalLeft; // a terminal job's status changed: never
    bool public paidTwice; // a job moved tokens out twice: never
    bool public wrongFlow; // a call moved other than the job's own escrow: never
    uint256 public settlements; // how many settlements the campaign reached

    constructor(JobEscrow escrow_, address owner_, address hook_, address[] memory tokens_) {
        escrow = escrow_;
        owner = owner_;
        hook = hook_;
        tokens = tokens_;
        for (uint256 i = 0; i < 2; i++) {
            for (uint256 t = 0; t < tokens_.length; t++) {
                MockERC20(tokens_[t]).mint(clients[i], 1e40);
                vm.prank(clients[i]);
                MockERC20(tokens_[t]).approve(address(escrow_), type(uint256).max);
            }
        }
    }

    // --- views for the invariants ---

    function count() external view returns (uint256) {
        return _jobs.length;
    }

    function job(uint256 i) external view returns (Mirror memory) {
        return _jobs[i];
    }

    function tokenCount() external view returns (uint256) {
        return tokens.length;
    }

    // --- actions ---

    function createJob(uint256 clientSeed, uint256 providerSeed, bool withProvider, bool withHook, uint256 duration)
        external
    {
        address c = clients[clientSeed % 2];
        address p = withProvider ? providers[providerSeed % 2] : address(0);
        address e = evaluators[providerSeed / 2 % 2];
        duration = bound(duration, 5 minutes + 1, 10 days);
        vm.prank(c);
        uint256 id = escrow.createJob(p, e, block.timestamp + duration, "job", withHook ? hook : address(0), 0);
        _jobs.push(Mirror(id, c, p, e, IERC8183.JobStatus.Open, 0, 0));
    }

    /// createJob, setBudget and fund in one call, so the campaign has funded jobs to settle.
    function openFunded(uint256 clientSeed, uint256 providerSeed, uint256 tokenSeed, uint256 amount, bool withHook)
        external
    {
        this.createJob(clientSeed, providerSeed, true, withHook, 1 days);
        Mirror storage m = _jobs[_jobs.length - 1];
        amount = bound(amount, 1_000, 1e30);
        vm.prank(m.client);
        escrow.setBudget(m.id, tokens[tokenSeed % tokens.length], amount, "");
        this.fund(_jobs.length - 1);
    }

    function setProvider(uint256 seed, uint256 providerSeed) external {
        Mirror storage m = _pickIn(seed, OPEN, false);
        address p = providers[providerSeed % 2];
        vm.prank(m.client);
        escrow.setProvider(m.id, p, providerSeed);
        m.provider = p;
    }

    function setBudget(uint256 seed, bool byProvider, uint256 tokenSeed, uint256 amount) external {
        Mirror storage m = _pickIn(seed, OPEN, false);
        amount = bound(amount, 0, 1e30);
        address t = escrow.getJob(m.id).paymentToken;
        if (t == address(0) || !byProvider) t = tokens[tokenSeed % tokens.length];
        vm.prank(byProvider && m.provider != address(0) ? m.provider : m.client);
        escrow.setBudget(m.id, t, amount, "");
    }

    function fund(uint256 seed) external {
        Mirror storage m = _pickIn(seed, OPEN, true);
        IERC8183.Job memory j = escrow.getJob(m.id);
        uint256 before = _balance(j.paymentToken);
        vm.prank(m.client);
        escrow.fund(m.id, j.budget, "");
        uint256 arrived = _balance(j.paymentToken) - before;
        if (arrived != escrow.getJob(m.id).budget) wrongFlow = true;
        m.held = arrived;
        _sync(m);
    }

    function submit(uint256 seed) external {
        Mirror storage m = _pickIn(seed, FUNDED, false);
        vm.prank(m.provider);
        escrow.submit(m.id, keccak256("work"), "");
        _sync(m);
    }

    function complete(uint256 seed) external {
        Mirror storage m = _pickIn(seed, SUBMITTED, false);
        _settle(m, m.evaluator, abi.encodeCall(IERC8183.complete, (m.id, keccak256("ok"), "")));
    }

    function reject(uint256 seed) external {
        Mirror storage m = _pickIn(seed, FUNDED | SUBMITTED | (seed % 4 == 0 ? OPEN : 0), false);
        address by = m.status == IERC8183.JobStatus.Open ? m.client : m.evaluator;
        _settle(m, by, abi.encodeCall(IERC8183.reject, (m.id, keccak256("no"), "")));
    }

    function claimRefund(uint256 seed, address anyone) external {
        Mirror storage m = _pickIn(seed, OPEN | FUNDED | SUBMITTED, false);
        _settle(m, anyone, abi.encodeCall(IERC8183.claimRefund, (m.id)));
    }

    function warp(uint256 by) external {
        vm.warp(block.timestamp + bound(by, 1, 12 hours));
    }

    function setFees(uint256 platformBP, uint256 evaluatorBP) external {
        platformBP = bound(platformBP, 0, 500);
        evaluatorBP = bound(evaluatorBP, 0, 500);
        vm.startPrank(owner);
        escrow.setPlatformFee(0, owner);
        escrow.setEvaluatorFee(evaluatorBP);
        escrow.setPlatformFee(platformBP, owner);
        vm.stopPrank();
    }

    /// Tries every settlement on an arbitrary job from an arbitrary caller: whatever the escrow
    /// lets through must still be a job's first and only settlement.
    function replay(uint256 seed, uint256 which, address by) external {
        Mirror storage m = _pick(seed);
        bytes memory call = which % 3 == 0
            ? abi.encodeCall(IERC8183.complete, (m.id, bytes32(0), ""))
            : which % 3 == 1
                ? abi.encodeCall(IERC8183.reject, (m.id, bytes32(0), ""))
                : abi.encodeCall(IERC8183.claimRefund, (m.id));
        _settle(m, by, call);
    }

    // --- internals ---

    function _pick(uint256 seed) internal view returns (Mirror storage) {
        require(_jobs.length > 0, "no jobs yet");
        return _jobs[seed % _jobs.length];
    }

    uint256 private constant OPEN = 1 << uint256(IERC8183.JobStatus.Open);
    uint256 private constant FUNDED = 1 << uint256(IERC8183.JobStatus.Funded);
    uint256 private constant SUBMITTED = 1 << uint256(IERC8183.JobStatus.Submitted);

    /// The first job from `seed` on whose status is in `mask` (and, with `live`, that has a
    /// provider and has not expired), or the job at `seed` when none is: the campaign spends
    /// its calls on jobs the action can move, and still tries the others.
    function _pickIn(uint256 seed, uint256 mask, bool live) internal view returns (Mirror storage) {
        require(_jobs.length > 0, "no jobs yet");
        for (uint256 k = 0; k < _jobs.length; k++) {
            Mirror storage m = _jobs[(seed + k) % _jobs.length];
            if ((1 << uint256(m.status)) & mask == 0) continue;
            if (live && (m.provider == address(0) || block.timestamp >= escrow.getJob(m.id).expiredAt)) continue;
            return m;
        }
        return _jobs[seed % _jobs.length];
    }

    function _balance(address t) internal view returns (uint256) {
        return t == address(0) ? 0 : MockERC20(t).balanceOf(address(escrow));
    }

    /// Runs a settling call as `by` and checks what left the escrow: the job's whole escrow
    /// the first time it settles, nothing otherwise.
    function _settle(Mirror storage m, address by, bytes memory call) internal {
        address t = escrow.getJob(m.id).paymentToken;
        uint256 before = _balance(t);
        vm.prank(by);
        (bool ok, bytes memory ret) = address(escrow).call(call);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
        uint256 out = before - _balance(t);
        if (out != m.held) wrongFlow = true;
        if (out > 0) {
            if (m.settled > 0) paidTwice = true;
            m.settled++;
        }
        m.held = 0;
        settlements++;
        _sync(m);
    }

    function _sync(Mirror storage m) internal {
        IERC8183.JobStatus now_ = escrow.getJob(m.id).status;
        if (_terminal(m.status) && now_ != m.status) terminalLeft = true;
        m.status = now_;
    }

    function _terminal(IERC8183.JobStatus s) internal pure returns (bool) {
        return s == IERC8183.JobStatus.Completed || s == IERC8183.JobStatus.Rejected || s == IERC8183.JobStatus.Expired;
    }
}

contract JobEscrowInvariantTest is Test {
    JobHandler internal handler;
    JobEscrow internal escrow;

    function setUp() public {
        vm.warp(1_700_000_000);
        address owner = makeAddr("owner");
        escrow = new JobEscrow(owner, makeAddr("treasury"));
        RecordingHook hook = new RecordingHook();
        vm.prank(owner);
        escrow.setHookWhitelist(address(hook), true);
        address[] memory tokens = new address[](2);
        tokens[0] = address(new MockERC20("Test", "TST"));
        tokens[1] = address(new FeeOnTransferToken(300));
        handler = new JobHandler(escrow, owner, address(hook), tokens);
        targetContract(address(handler));
    }

    /// The escrow's balance of each token is the sum of the budgets of its funded, unsettled
    /// jobs, as the escrow itself records them: nothing more, nothing less.
    function invariant_balanceIsTheFundedJobs() public view {
        for (uint256 t = 0; t < handler.tokenCount(); t++) {
            address token = handler.tokens(t);
            uint256 owed;
            for (uint256 id = 1; id <= escrow.jobCounter(); id++) {
                IERC8183.Job memory j = escrow.getJob(id);
                if (
                    j.paymentToken == token
                        && (j.status == IERC8183.JobStatus.Funded || j.status == IERC8183.JobStatus.Submitted)
                ) owed += j.budget;
            }
            vm.assertEq(MockERC20(token).balanceOf(address(escrow)), owed, "balance == funded, unsettled budgets");
        }
    }

    function invariant_noJobPaysTwice() public view {
        vm.assertFalse(handler.paidTwice(), "a job moved tokens out twice");
        vm.assertFalse(handler.wrongFlow(), "a call moved other than the job's own escrow");
        for (uint256 i = 0; i < handler.count(); i++) {
            vm.assertLe(handler.job(i).settled, 1, "settled at most once");
        }
    }

    function invariant_terminalStatesStayTerminal() public view {
        vm.assertFalse(handler.terminalLeft(), "a call moved a terminal job");
        for (uint256 i = 0; i < handler.count(); i++) {
            JobHandler.Mirror memory m = handler.job(i);
            vm.assertEq(uint256(escrow.getJob(m.id).status), uint256(m.status), "status as last seen");
        }
    }
}
