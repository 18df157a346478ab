// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test} from "./Test.sol";
import {BountyEscrow} from "../../src/BountyEscrow.sol";
import {StakeRegistry} from "../../src/StakeRegistry.sol";
import {JobEscrow} from "../../src/JobEscrow.sol";
import {IERC8183} from "../../src/IERC8183.sol";
import {ISuretyHook} from "../../src/ISuretyHook.sol";
import {SuretyHook} from "../../src/SuretyHook.sol";
import {SuretyPool} from "../../src/SuretyPool.sol";
import {MockERC20} from "../mocks/Tokens.sol";

/// @notice The address a CREATE from `deployer` at `nonce` gets (nonces below 2^16).
function createAddress(address deployer, uint256 nonce) pure returns (address) {
    bytes memory rlp;
    if (nonce == 0) {
        rlp = abi.encodePacked(bytes1(0xd6), bytes1(0x94), deployer, bytes1(0x80));
    } else if (nonce < 0x80) {
        // forge-lint: disable-next-line(unsafe-typecast) nonce < 0x80
        rlp = abi.encodePacked(bytes1(0xd6), bytes1(0x94), deployer, uint8(nonce));
    } else if (nonce < 0x100) {
        // forge-lint: disable-next-line(unsafe-typecast) nonce < 0x100
        rlp = abi.encodePacked(bytes1(0xd7), bytes1(0x94), deployer, bytes1(0x81), uint8(nonce));
    } else {
        // forge-lint: disable-next-line(unsafe-typecast) nonce < 0x10000
        rlp = abi.encodePacked(bytes1(0xd8), bytes1(0x94), deployer, bytes1(0x82), uint16(nonce));
    }
    return address(uint160(uint256(keccak256(rlp))));
}

/// @notice JobEscrow, BountyEscrow (whose registry names the hook as job locker), SuretyHook
/// and its pool, a token, funded actors, and helpers that walk a Surety job through its life.
abstract contract HookFixture is Test {
    uint256 internal constant START = 1_700_000_000;
    uint256 internal constant PLATFORM_BP = 100; // 1%
    uint32 internal constant REVIEW = 3 days;
    uint32 internal constant ARBITER_TIME = 5 days;
    uint256 internal constant DURATION = 30 days;
    uint256 internal constant BUDGET = 1_000 ether;
    uint128 internal constant STAKE = 1 ether;

    JobEscrow internal core;
    BountyEscrow internal escrow;
    StakeRegistry internal registry;
    SuretyHook internal hook;
    SuretyPool internal pool;
    MockERC20 internal token;

    address internal owner = makeAddr("owner");
    address internal treasury = makeAddr("treasury");
    address internal client = makeAddr("client");
    address internal arbiter = makeAddr("arbiter");
    address internal worker = makeAddr("worker");
    address internal worker2 = makeAddr("worker2");
    address internal worker3 = makeAddr("worker3");
    address internal stranger = makeAddr("stranger");

    bytes32 internal constant RESULT = keccak256("result");

    function setUp() public virtual {
        vm.warp(START);
        token = new MockERC20("Test", "TST");
        core = new JobEscrow(owner, treasury);
        address predicted = createAddress(address(this), vm.getNonce(address(this)) + 1);
        escrow = new BountyEscrow(owner, treasury, 100, address(0), 7 days, 0.1 ether, predicted);
        registry = StakeRegistry(address(escrow.stakeRegistry()));
        hook = new SuretyHook(core, registry);
        vm.assertEq(address(hook), predicted, "predicted");
        pool = hook.pool();
        vm.startPrank(owner);
        core.setHookWhitelist(address(hook), true);
        core.setPlatformFee(PLATFORM_BP, treasury);
        vm.stopPrank();
        token.mint(client, 1_000_000 ether);
        vm.prank(client);
        token.approve(address(core), type(uint256).max);
        address[3] memory ws = [worker, worker2, worker3];
        for (uint256 i; i < ws.length; ++i) {
            vm.deal(ws[i], 100 ether);
            vm.startPrank(ws[i]);
            registry.bind(agentOf(ws[i]), "jws");
            registry.stake{value: 10 ether}(agentOf(ws[i]), 10 ether);
            vm.stopPrank();
        }
    }

    function agentOf(address w) internal pure returns (bytes32) {
        return keccak256(abi.encode("did:key:", w));
    }

    function plan(uint16 maxEntries, uint16 maxWinners, uint128 minStake)
        internal
        view
        returns (ISuretyHook.Plan memory)
    {
        return ISuretyHook.Plan({
            arbiter: arbiter,
            reviewWindow: REVIEW,
            arbiterTime: ARBITER_TIME,
            maxEntries: maxEntries,
            maxWinners: maxWinners,
            minStake: minStake,
            worker: address(0),
            prevPart: 0
        });
    }

    function created() internal returns (uint256 id) {
        vm.prank(client);
        id = core.createJob(address(pool), address(hook), block.timestamp + DURATION, "job", address(hook), 0);
    }

    function planned(ISuretyHook.Plan memory p) internal returns (uint256 id) {
        id = created();
        vm.prank(client);
        core.setBudget(id, address(token), BUDGET, abi.encode(p));
    }

    function funded(ISuretyHook.Plan memory p) internal returns (uint256 id) {
        id = planned(p);
        vm.prank(client);
        core.fund(id, BUDGET, "");
    }

    function joinAs(uint256 id, address w) internal {
        vm.prank(w);
        hook.join(id, agentOf(w));
    }

    function submitAs(uint256 id, address w) internal {
        vm.prank(w);
        hook.submit(id, keccak256(abi.encode(RESULT, w)));
    }

    /// @dev A single-worker job with a stake, joined and submitted by `worker`.
    function submitted() internal returns (uint256 id) {
        id = funded(plan(1, 1, STAKE));
        joinAs(id, worker);
        submitAs(id, worker);
    }

    function disputed() internal returns (uint256 id) {
        id = submitted();
        vm.prank(client);
        hook.reject(id, keccak256("bad"));
    }

    function net(uint256 amount) internal pure returns (uint256) {
        return amount - amount * PLATFORM_BP / 10_000;
    }

    function phaseOf(uint256 id) internal view returns (ISuretyHook.Phase) {
        return hook.jobOf(id).phase;
    }

    function assertPhase(uint256 id, ISuretyHook.Phase want) internal view {
        vm.assertEq(uint256(phaseOf(id)), uint256(want), "phase");
    }

    function coreStatus(uint256 id) internal view returns (IERC8183.JobStatus) {
        return core.getJob(id).status;
    }

    function one(address a) internal pure returns (address[] memory w) {
        w = new address[](1);
        w[0] = a;
    }

    function two(address a, address b) internal pure returns (address[] memory w) {
        w = new address[](2);
        w[0] = a;
        w[1] = b;
    }

    function bps1(uint16 a) internal pure returns (uint16[] memory b) {
        b = new uint16[](1);
        b[0] = a;
    }

    function bps2(uint16 a, uint16 c) internal pure returns (uint16[] memory b) {
        b = new uint16[](2);
        b[0] = a;
        b[1] = c;
    }
}
